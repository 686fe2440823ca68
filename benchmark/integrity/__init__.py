"""Results people can trust: MLE-bench's plagiarism check (code similarity as Dolos
measures it) and its rule-violation checks, as a library (no Django, no runner)."""

from benchmark.integrity.detectors import (
    CHECKS,
    Finding,
    external_llm_use,
    hand_written_submission,
    read_sources,
    scan_run,
    unauthorized_resources,
)
from benchmark.integrity.winnowing import (
    CorpusMatch,
    Fragment,
    PairSimilarity,
    best_match,
    compare_corpus,
    similarity,
)

__all__ = [
    "CHECKS",
    "CorpusMatch",
    "Finding",
    "Fragment",
    "PairSimilarity",
    "best_match",
    "compare_corpus",
    "external_llm_use",
    "hand_written_submission",
    "read_sources",
    "scan_run",
    "similarity",
    "unauthorized_resources",
]
