"""The example upload archive the docs offer for download (``docs/examples/``): two MLE-bench
run groups (seeds 0 and 1) of the demo's ``linear`` reference agent on the four demo
competitions, laid out as MLE-bench's harness writes them.

The zip is the same bytes every time for the same submissions (fixed order, dates and
modes), so the committed copy can be checked against a fresh build::

    python -m benchmark.example_archive docs/examples/demo-run-groups.zip

The demo is built in a temporary folder for it (a few seconds).
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import zipfile
from pathlib import Path

from benchmark.demo import DEMO_COMPETITIONS, DemoBuild, build_demo

AGENT = "linear"
SEEDS = (0, 1)
# A fixed date for every member: the same submissions give the same bytes.
MEMBER_DATE = (2024, 10, 1, 0, 0, 0)

TRAIN_PY = """\
# What the agent ran (kept with the run: the site checks code for plagiarism).
import pandas as pd
from sklearn.linear_model import LogisticRegression

train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")
"""


def run_group_name(seed: int) -> str:
    return f"2024-10-0{seed + 1}T00-00-00-GMT_run-group_{AGENT}"


def run_id(competition_id: str, index: int, seed: int) -> str:
    return f"{competition_id}_{index:08d}-0000-4000-8000-{seed:012d}"


def example_members(build: DemoBuild) -> dict[str, bytes]:
    """The archive's files: path inside the archive -> bytes."""
    members: dict[str, bytes] = {}
    for seed in SEEDS:
        group = run_group_name(seed)
        runs = {}
        for index, competition_id in enumerate(DEMO_COMPETITIONS):
            run = run_id(competition_id, index, seed)
            runs[run] = {"success": True}
            folder = f"{group}/{run}"
            members[f"{folder}/submission/submission.csv"] = build.submissions[AGENT][seed][
                competition_id
            ].read_bytes()
            members[f"{folder}/code/train.py"] = TRAIN_PY.encode()
            members[f"{folder}/logs/run.log"] = (
                f"Run of {AGENT} on {competition_id}, seed {seed}.\n"
                "Run completed in 61.0 seconds.\n"
            ).encode()
        metadata = {"run_group": group, "created_at": f"2024-10-0{seed + 1}", "runs": runs}
        members[f"{group}/metadata.json"] = (json.dumps(metadata, indent=2) + "\n").encode()
    return members


def example_zip(build: DemoBuild) -> bytes:
    """The example archive, byte for byte the same for the same submissions."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(example_members(build).items()):
            info = zipfile.ZipInfo(name, date_time=MEMBER_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="the zip to write")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as data_dir:
        archive = example_zip(build_demo(Path(data_dir), seeds=max(SEEDS) + 1))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(archive)
    print(f"{args.output}: {args.output.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
