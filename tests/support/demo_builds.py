"""``build_demo`` for tests: the demo is built once per session and each test gets a copy
of the competitions and seeds it asked for, in its own folder.

Building the demo trains the reference agents and the synthetic leaderboards' population
(seconds per competition). What it writes for a competition, and for an agent's seed,
depends on nothing else: a competition's folder and seed ``s``'s submissions are the same
whichever other competitions and how many seeds are built with them. So tests share one
build instead of training again; the first test that asks still runs the real builder."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from benchmark import demo

_BUILT: list[demo.DemoBuild] = []


def _full_build(seeds: int) -> demo.DemoBuild:
    if not _BUILT or len(next(iter(_BUILT[0].submissions.values()))) < seeds:
        root = Path(tempfile.mkdtemp(prefix="mleboard-demo-build-"))
        atexit.register(shutil.rmtree, root, True)
        _BUILT[:] = [demo.build_demo(root, seeds=max(seeds, 3))]
    return _BUILT[0]


def build_demo(
    data_dir: Path, *, seeds: int = 3, competitions=demo.DEMO_COMPETITIONS
) -> demo.DemoBuild:
    """What ``benchmark.demo.build_demo(data_dir, seeds=..., competitions=...)`` builds,
    copied from the session's build."""
    built = _full_build(seeds)
    source, data_dir = built.data_dir, Path(data_dir)
    out = demo.DemoBuild(data_dir=data_dir)

    def copied(path: Path) -> Path:
        target = data_dir / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        return target

    for cid in competitions:
        shutil.copytree(source / cid, data_dir / cid, dirs_exist_ok=True)
        out.leaderboards[cid] = data_dir / built.leaderboards[cid].relative_to(source)
        for agent, by_seed in built.submissions.items():
            for seed in range(seeds):
                path = copied(by_seed[seed][cid])
                out.submissions.setdefault(agent, {}).setdefault(seed, {})[cid] = path
    return out


def demo_site(tmp_path: Path, settings, *, seeds: int = 1, competitions=demo.DEMO_COMPETITIONS):
    """A test's site with the demo: its data and media folders under ``tmp_path``, the
    competitions built (``seeds`` of each reference agent), in the catalogue and with
    their leaderboards. Returns the build (its submissions)."""
    from webapp.competitions.models import Competition
    from webapp.competitions.services import catalogue_sync, leaderboard_import_file

    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir(exist_ok=True)
    build = build_demo(settings.MLEBOARD_DATA_DIR, seeds=seeds, competitions=competitions)
    catalogue_sync()
    for cid in competitions:
        leaderboard_import_file(Competition.objects.get(slug=cid), build.leaderboards[cid])
    return build
