"""Grading speed and memory per column metric, and the whole ``mleboard grade-sample`` process.

    .venv/bin/python perf/grading_bench.py            # 10^4, 10^6 and 10^7 rows
    .venv/bin/python perf/grading_bench.py --quick    # 10^4 and 10^6 rows

Each (metric, rows) case is graded in a fresh Python process, so that its peak memory is
its own: rows per second, peak RSS and its ratio to the CSV's size, and for 10^6 rows the
whole ``python -m cli grade-sample`` process (method: docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

REPO = Path(__file__).resolve().parents[1]

# metric -> (competition, id kind, answers file under prepared/private)
CASES = {
    "accuracy": ("tabular-playground-series-dec-2021", "int", "test.csv"),
    "roc_auc": ("aerial-cactus-identification", "hex", "test.csv"),
    "binary_log_loss": ("statoil-iceberg-classifier-challenge", "hex", "test.csv"),
    "multiclass_log_loss": ("spooky-author-identification", "text", "test.csv"),
    "rmse": ("petfinder-pawpularity-score", "hex", "test.csv"),
    "mae": ("ventilator-pressure-prediction", "int", "test.csv"),
    "mean_columnwise_rmsle": ("nomad2018-predict-transparent-conductors", "int", "test.csv"),
    "quadratic_weighted_kappa": ("aptos2019-blindness-detection", "hex", "test.csv"),
    "f1_macro": ("herbarium-2022-fgvc9", "int", "answers.csv"),
    "f1_micro": ("plant-seedlings-classification", "text", "answers.csv"),
    "mcc": ("nfl-player-contact-detection", "text", "test.csv"),
    "mean_columnwise_roc_auc": ("playground-series-s3e18", "int", "test.csv"),
}


def _ids(kind: str, n: int, rng: np.random.Generator) -> pa.Array:
    if kind == "int":
        return pa.array(rng.permutation(n) + 1)
    if kind == "hex":
        # 32 hex digits + ".jpg", like image-file ids
        numbers = rng.permutation(n).astype(np.uint64) * np.uint64(2654435761)
        return pa.array(np.char.add(np.char.mod("%032x", numbers), ".jpg").astype(object))
    return pa.array(
        np.char.add("id", np.char.zfill(rng.permutation(n).astype(str), 8)).astype(object)
    )


def build_case(metric: str, n: int, root: Path, seed: int = 0) -> tuple[str, Path, Path]:
    """Write answers and a shuffled submission; returns (competition, data_dir, submission)."""
    competition, id_kind, answers_name = CASES[metric]
    rng = np.random.default_rng(seed)
    ids = _ids(id_kind, n, rng)
    if metric == "accuracy":
        truth = {"Cover_Type": rng.integers(1, 8, n)}
        pred = {"Cover_Type": rng.integers(1, 8, n)}
    elif metric in ("roc_auc", "binary_log_loss"):
        name = "has_cactus" if metric == "roc_auc" else "is_iceberg"
        truth = {name: rng.integers(0, 2, n)}
        pred = {name: rng.random(n)}
    elif metric == "multiclass_log_loss":
        classes = ["EAP", "HPL", "MWS"]
        chosen = rng.integers(0, 3, n)
        truth = {c: (chosen == i).astype(np.int64) for i, c in enumerate(classes)}
        p = rng.random((n, 3))
        p /= p.sum(axis=1, keepdims=True)
        pred = {c: p[:, i] for i, c in enumerate(classes)}
    elif metric == "rmse":
        truth = {"Pawpularity": rng.integers(1, 101, n)}
        pred = {"Pawpularity": rng.uniform(1, 100, n)}
    elif metric == "mae":
        truth = {"pressure": rng.normal(10, 5, n), "u_out": rng.integers(0, 2, n)}
        pred = {"pressure": rng.normal(10, 5, n)}
    elif metric == "mean_columnwise_rmsle":
        cols = ["formation_energy_ev_natom", "bandgap_energy_ev"]
        truth = {c: rng.uniform(0, 5, n) for c in cols}
        pred = {c: rng.uniform(0, 5, n) for c in cols}
    elif metric == "quadratic_weighted_kappa":
        truth = {"diagnosis": rng.integers(0, 5, n)}
        pred = {"diagnosis": rng.integers(0, 5, n)}
    elif metric == "f1_macro":
        truth = {"Predicted": rng.integers(0, 15000, n)}
        pred = {"Predicted": rng.integers(0, 15000, n)}
    elif metric == "f1_micro":
        species = np.array(["Black-grass", "Charlock", "Cleavers", "Common Chickweed", "Maize"])
        truth = {"species": pa.array(species[rng.integers(0, 5, n)])}
        pred = {"species": pa.array(species[rng.integers(0, 5, n)])}
    elif metric == "mcc":
        truth = {"contact": rng.integers(0, 2, n)}
        pred = {"contact": rng.integers(0, 2, n)}
    elif metric == "mean_columnwise_roc_auc":
        truth = {"EC1": rng.integers(0, 2, n), "EC2": rng.integers(0, 2, n)}
        pred = {"EC1": rng.random(n), "EC2": rng.random(n)}
    else:
        raise ValueError(metric)
    id_column = {
        "tabular-playground-series-dec-2021": "Id",
        "aerial-cactus-identification": "id",
        "statoil-iceberg-classifier-challenge": "id",
        "spooky-author-identification": "id",
        "petfinder-pawpularity-score": "Id",
        "ventilator-pressure-prediction": "id",
        "nomad2018-predict-transparent-conductors": "id",
        "aptos2019-blindness-detection": "id_code",
        "herbarium-2022-fgvc9": "Id",
        "plant-seedlings-classification": "file",
        "nfl-player-contact-detection": "contact_id",
        "playground-series-s3e18": "id",
    }[competition]
    data_dir = root / "data"
    private = data_dir / competition / "prepared" / "private"
    private.mkdir(parents=True, exist_ok=True)
    pacsv.write_csv(pa.table({id_column: ids, **truth}), private / answers_name)
    # positional graders (nomad) need the answers' order; the others get shuffled rows
    order = np.arange(n) if metric == "mean_columnwise_rmsle" else rng.permutation(n)
    submission = root / f"{competition}.csv"
    table = pa.table({id_column: ids, **pred}).take(pa.array(order))
    pacsv.write_csv(table, submission)
    return competition, data_dir, submission


_CHILD = """
import json, resource, sys, time
from pathlib import Path
from graders import grade_submission, grader_for
from graders.reading import use_compact_memory
use_compact_memory()  # as the command line does
grader_for(sys.argv[2])  # imports the grader's module: start-up is measured separately
start = time.perf_counter()
result = grade_submission(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "valid": result.valid_submission, "error": result.error,
                  "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

_BASELINE = """
import json, resource
import numpy, pyarrow.compute, pyarrow.csv, graders
print(json.dumps({"max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _run_child(code: str, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def grade_sample_process(competition: str, data_dir: Path, submission: Path) -> dict:
    """Wall time and peak RSS of the whole CLI process, imports included."""
    import os

    command = [
        sys.executable,
        "-m",
        "cli",
        "grade-sample",
        str(submission),
        competition,
        "--data-dir",
        str(data_dir),
    ]
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    stdout = child.stdout.read().decode()
    child.returncode = os.waitstatus_to_exitcode(status)
    report = json.loads(stdout) if child.returncode == 0 else {"error": child.stderr.read()}
    return {
        "seconds": elapsed,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "max_rss_kb": usage.ru_maxrss,
        "report": report,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^4 and 10^6 rows only")
    parser.add_argument("--rows", type=int, nargs="+", help="these sizes only (e.g. 1000)")
    parser.add_argument("--metrics", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument(
        "--build", nargs=3, metavar=("METRIC", "ROWS", "DIR"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.build:  # child mode: write one case and print where it is
        metric, rows, folder = args.build
        competition, data_dir, submission = build_case(metric, int(rows), Path(folder))
        print(json.dumps([competition, str(data_dir), str(submission)]))
        return 0
    sizes = args.rows or ([10**4, 10**6] if args.quick else [10**4, 10**6, 10**7])
    baseline = _run_child(_BASELINE)["max_rss_kb"] / 1024
    print(f"baseline RSS after imports: {baseline:.0f} MB")
    print(
        f"{'metric':<26}{'rows':>10}{'rows/s':>14}{'seconds':>9}{'peak MB':>9}"
        f"{'CSV MB':>8}{'peak/CSV':>9}{'(peak-base)/CSV':>17}"
    )
    process_rows = []
    for metric in args.metrics:
        for n in sizes:
            with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
                # Built in a separate process: a child inherits its parent's peak RSS on
                # Linux, so the parent must stay small for the children's figures to count.
                built = subprocess.run(
                    [sys.executable, __file__, "--build", metric, str(n), tmp],
                    cwd=REPO,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                competition, data_dir, submission = json.loads(built.stdout)
                data_dir, submission = Path(data_dir), Path(submission)
                csv_mb = submission.stat().st_size / 2**20
                child = _run_child(_CHILD, str(submission), competition, str(data_dir))
                if not child["valid"]:
                    print(f"{metric}: invalid submission: {child['error']}")
                    continue
                peak = child["max_rss_kb"] / 1024
                print(
                    f"{metric:<26}{n:>10}{n / child['seconds']:>14,.0f}{child['seconds']:>9.3f}"
                    f"{peak:>9.0f}{csv_mb:>8.1f}{peak / csv_mb:>9.2f}"
                    f"{(peak - baseline) / csv_mb:>17.2f}"
                )
                if n == 10**6:
                    process = grade_sample_process(competition, data_dir, submission)
                    process_rows.append((metric, process, csv_mb))
    print("\nwhole `python -m cli grade-sample` process, 10^6 rows:")
    for metric, process, csv_mb in process_rows:
        ok = "ok" if process["seconds"] < 1 else "SLOW"
        print(
            f"{metric:<26}{process['seconds']:>7.3f} s wall {process['cpu_seconds']:>6.3f} s CPU"
            f"  peak {process['max_rss_kb'] / 1024:>5.0f} MB"
            f"  ({process['max_rss_kb'] / 1024 / csv_mb:.1f}x CSV)  {ok}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
