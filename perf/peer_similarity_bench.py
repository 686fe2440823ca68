"""How many honest pairs a peer comparison flags, with and without Dolos'
maxFingerprintPercentage: every pair of a corpus of solutions to different competitions,
compared as ``mleboard similarity`` compares them (the earlier name as Dolos' left file).

    python perf/peer_similarity_bench.py [FOLDER] [--fraction 0.5] [--threshold 0.6]

FOLDER holds the ``.py`` files (e.g. the example solutions of a scaffold's repository);
without it, the project's own scaffold-like corpus (tests/support/scaffold_corpus.py).
Prints, without the option, with it, and with the corpus's template ignored instead (the
project's corpus only): the pairs at or above the threshold, the files with such a match,
the median of each file's best match, and the seconds taken.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def measure(files: dict[str, str], ignored, threshold: float) -> dict:
    from benchmark.integrity.winnowing import compare_corpus

    names = sorted(files)
    best = dict.fromkeys(names, 0.0)
    pairs = 0
    for index, name in enumerate(names):
        later = {other: files[other] for other in names[index + 1 :]}
        for match in compare_corpus({name: files[name]}, later, 0.0, ignored=ignored):
            best[name] = max(best[name], match.similarity)
            best[match.reference] = max(best[match.reference], match.similarity)
            pairs += match.similarity >= threshold
    return {
        "pairs": pairs,
        "files_with_a_match": sum(value >= threshold for value in best.values()),
        "median_best": statistics.median(best.values()),
    }


def main() -> None:
    from benchmark.integrity.common_code import shared_code_filter, template_fingerprints
    from benchmark.integrity.winnowing import file_fingerprints

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--fraction", type=float, default=0.5)
    parser.add_argument("--threshold", type=float, default=0.6)
    args = parser.parse_args()
    template = None
    if args.folder is None:
        from tests.support.scaffold_corpus import SOLUTIONS, TEMPLATE

        files, template, source = SOLUTIONS, TEMPLATE, "tests/support/scaffold_corpus.py"
    else:
        files = {p.name: p.read_text(encoding="utf-8") for p in sorted(args.folder.glob("*.py"))}
        source = str(args.folder)
    total = len(files) * (len(files) - 1) // 2
    print(f"{len(files)} files ({source}), {total} pairs, threshold {args.threshold}")
    documents = [[file_fingerprints(name, text)] for name, text in files.items()]
    cases = [("without the option", frozenset())]
    started = time.perf_counter()
    common = shared_code_filter(documents, args.fraction, minimum_to_keep_pairs=False)
    cases.append((f"--max-fingerprint-percentage {args.fraction}", common.ignored))
    if template is not None:
        cases.append(("--ignore (its template)", template_fingerprints({"template.py": template})))
    for label, ignored in cases:
        started = time.perf_counter()
        result = measure(files, ignored, args.threshold)
        print(
            f"{label:38} pairs >= {args.threshold}: {result['pairs']:4}   files with one: "
            f"{result['files_with_a_match']:3}   median best match {result['median_best']:.3f}"
            f"   ({len(ignored)} fingerprints ignored, {time.perf_counter() - started:.2f} s)"
        )


if __name__ == "__main__":
    main()
