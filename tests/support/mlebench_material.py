"""MLE-bench material the tests need, kept in the repository or built here.

* ``SPLITS_DIR``: MLE-bench's ``experiments/splits/*.txt`` lists (facts: competition ids).
* ``lfs_pointer(data)``: a Git LFS pointer file, as a clone without ``git lfs pull`` has it
  (``version https://git-lfs.github.com/spec/v1`` / ``oid sha256:<hex>`` / ``size <n>``).
* ``build_checkout(root)``: a fresh clone's layout: ``mlebench/competitions/<id>/`` with
  ``config.yaml``, ``description.md``, ``description_obfuscated.md``, ``kernels.txt`` and a
  ``leaderboard.csv`` that is an LFS pointer, for every catalogue competition;
  ``experiments/splits/``; and a ``README.md`` whose Leaderboard section is written from
  ``entries`` in the README's own markdown (links, ``<br>``, footnote marks).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import yaml

from benchmark.catalogue import (
    load_catalogue,
)
from benchmark.published import PublishedEntry

SPLITS_DIR = Path(__file__).resolve().parents[1] / "data" / "mlebench_splits"
LFS_SPEC = "https://git-lfs.github.com/spec/v1"


def split_lists() -> dict[str, list[str]]:
    """MLE-bench's split lists: split name -> competition ids, in file order."""
    return {p.stem: p.read_text().split() for p in sorted(SPLITS_DIR.glob("*.txt"))}


def lfs_pointer(data: bytes) -> str:
    """The pointer Git LFS leaves in a clone for a file with contents ``data``."""
    return f"version {LFS_SPEC}\noid sha256:{hashlib.sha256(data).hexdigest()}\nsize {len(data)}\n"


def build_checkout(root: Path, entries: list[PublishedEntry] | None = None) -> Path:
    """Write an MLE-bench checkout as cloned without LFS under ``root``; returns ``root``."""
    root = Path(root)
    competitions = root / "mlebench" / "competitions"
    for facts in load_catalogue().values():
        folder = competitions / facts.id
        folder.mkdir(parents=True, exist_ok=True)
        config = {
            "id": facts.id,
            "name": facts.name,
            "competition_type": facts.competition_type,
            "awards_medals": facts.awards_medals,
            "prizes": [{"position": 1, "value": 10000}],
            "description": f"mlebench/competitions/{facts.id}/description.md",
            "dataset": {"answers": facts.answers, "sample_submission": facts.sample_submission},
            "grader": {
                "name": facts.metric,
                "grade_fn": f"mlebench.competitions.{facts.id}.grade:grade",
            },
            "preparer": f"mlebench.competitions.{facts.id}.prepare:prepare",
        }
        (folder / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        (folder / "description.md").write_text(f"# {facts.name}\n\nPredict the target.\n")
        (folder / "description_obfuscated.md").write_text("# Task\n\nPredict the target.\n")
        (folder / "kernels.txt").write_text(f"someone/{facts.id}-starter\n")
        board = f"scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore\n{facts.id}\n"
        (folder / "leaderboard.csv").write_text(lfs_pointer(board.encode()))
    splits = root / "experiments" / "splits"
    splits.mkdir(parents=True, exist_ok=True)
    for path in SPLITS_DIR.glob("*.txt"):
        shutil.copy(path, splits / path.name)
    if entries is not None:
        (root / "README.md").write_text(readme_with_leaderboard(entries), encoding="utf-8")
    return root


def readme_with_leaderboard(entries: list[PublishedEntry]) -> str:
    """A README whose Leaderboard section lists ``entries`` in MLE-bench's markdown."""
    notes: dict[str, str] = {}

    def mark(texts) -> str:
        out = ""
        for text in texts:
            key = notes.setdefault(text, str(len(notes) + 2))  # [^1] is the leakage column's
            out += f"[^{key}]"
        return out

    lines = [
        "# MLE-bench",
        "",
        "Code for the paper.",
        "",
        "## Leaderboard",
        "",
        "| Agent | LLM(s) used | Low == Lite (%) | Medium (%) | High (%) | All (%) "
        "| Running Time (hours) | Date | Known Leakage[^1] | Source Code Available "
        "| Grading Reports Available |",
        "|-------|-------------|-----|-----|-----|-----|-----|-----|-----|-----|-----|",
    ]
    for e in entries:
        agent = f"[{e.agent}]({e.agent_url})" if e.agent_url else e.agent
        figures = [
            f"{f.mean:.2f} ± {f.standard_error:.2f}{mark(f.footnotes)}"
            for f in (e.figures[s] for s in ("low", "medium", "high", "all"))
        ]
        leak = f"[✓]({e.known_leakage_url})" if e.known_leakage else "-"
        hours = "" if e.runtime_hours is None else f"{e.runtime_hours:g}"
        date = e.date.isoformat() if e.date else ""
        cells = [
            agent,
            e.llm + mark(e.notes),
            *figures,
            hours,
            date,
            leak,
            "✓" if e.source_available else "X",
            "✓" if e.grading_reports_available else "X",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    leak_note = next((e.known_leakage_note for e in entries if e.known_leakage_note), "")
    lines += ["", f"[^1]: {leak_note or 'Marked when the authors say so.'}"]
    lines += [f"[^{key}]: {text}" for text, key in notes.items()]
    lines += ["", "## Benchmarking", "", "Repeat each evaluation with 3 seeds.", ""]
    return "\n".join(lines)


# MLE-bench's experiments/splits/systemcard.txt: the competitions OpenAI's system cards report.
SYSTEM_CARD = (
    "aptos2019-blindness-detection",
    "billion-word-imputation",
    "bms-molecular-translation",
    "cassava-leaf-disease-classification",
    "champs-scalar-coupling",
    "freesound-audio-tagging-2019",
    "h-and-m-personalized-fashion-recommendations",
    "hms-harmful-brain-activity-classification",
    "hotel-id-2021-fgvc8",
    "hubmap-kidney-segmentation",
    "imet-2020-fgvc7",
    "jigsaw-unintended-bias-in-toxicity-classification",
    "kuzushiji-recognition",
    "mlsp-2013-birds",
    "multi-modal-gesture-recognition",
    "new-york-city-taxi-fare-prediction",
    "nfl-player-contact-detection",
    "nomad2018-predict-transparent-conductors",
    "osic-pulmonary-fibrosis-progression",
    "petfinder-pawpularity-score",
    "plant-pathology-2021-fgvc8",
    "smartphone-decimeter-2022",
    "spooky-author-identification",
    "stanford-covid-vaccine",
    "tensorflow2-question-answering",
    "tweet-sentiment-extraction",
    "us-patent-phrase-to-phrase-matching",
    "uw-madison-gi-tract-image-segmentation",
    "ventilator-pressure-prediction",
    "whale-categorization-playground",
)
