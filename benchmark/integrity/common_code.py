"""Fingerprints that say nothing about copying: code many files share, and template code.

Runs of one scaffold share its boilerplate (imports, loading the data, a validation split,
writing ``submission.csv``), so two honest solutions to different problems can reach the
plagiarism threshold. Dolos ignores fingerprints two ways, both here as it does them:
``common_fingerprints`` (``maxFingerprintPercentage``: found in more than ``fraction * N``
of N documents) and ``template_fingerprints`` (its ignored file). A document may be a group
of files (a run's code). What ignoring does to a pair's similarity is ``winnowing``'s;
the rules read from Dolos' source are in docs/integrity.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from benchmark.integrity.winnowing import Fingerprints, file_fingerprints


class FingerprintShareRefused(ValueError):
    """The fraction or the number of files makes the filter meaningless; says why."""


def check_fraction(fraction: float) -> None:
    """Refuse what Dolos would refuse (outside 0..1) or silently ignore (0)."""
    if not 0.0 < fraction <= 1.0:
        raise FingerprintShareRefused(
            f"the maximum fingerprint percentage is a fraction above 0 and at most 1, "
            f"not {fraction:g} (Dolos reads 0 as no limit: leave the option out for that)"
        )


def common_fingerprints(
    documents: Iterable[Iterable[Fingerprints | None]], fraction: float
) -> frozenset[int]:
    """The hashes found in more than ``fraction`` of ``documents`` (each an iterable of
    one document's files' fingerprints; None for a file of no known language)."""
    check_fraction(fraction)
    found: Counter = Counter()
    count = 0
    for files in documents:
        count += 1
        hashes: set[int] = set()
        for fp in files:
            if fp is not None:
                hashes.update(fp.counts)
        found.update(hashes)
    limit = fraction * count
    return frozenset(h for h, n in found.items() if n > limit)


def template_fingerprints(files: dict[str, str]) -> frozenset[int]:
    """Every fingerprint of the template files (name -> text; names give the language)."""
    hashes: set[int] = set()
    for name, text in files.items():
        fp = file_fingerprints(name, text)
        if fp is not None:
            hashes.update(fp.counts)
    return frozenset(hashes)


@dataclass(frozen=True)
class SharedCodeFilter:
    """What a comparison set aside, to say so beside its figures: the fraction asked
    for, over how many documents, whether it applied (it cannot keep anything two
    documents share below ``2 / fraction`` documents), and how many hashes it ignored
    (with the template's)."""

    fraction: float | None
    documents: int
    applied: bool
    ignored: frozenset[int]
    template_hashes: int = 0

    def as_dict(self) -> dict:
        return {
            "fraction": self.fraction,
            "documents": self.documents,
            "applied": self.applied,
            "ignored_fingerprints": len(self.ignored),
            "template_fingerprints": self.template_hashes,
        }


def shared_code_filter(
    documents: list[list[Fingerprints | None]],
    fraction: float | None,
    templates: dict[str, str] | None = None,
    *,
    minimum_to_keep_pairs: bool = True,
) -> SharedCodeFilter:
    """The hashes to ignore among ``documents``: those in more than ``fraction`` of them
    (when ``fraction`` is given and, with ``minimum_to_keep_pairs``, there are enough
    documents that what two of them share is kept: ``fraction * N >= 2``), and every
    fingerprint of ``templates``."""
    template = template_fingerprints(templates or {})
    count = len(documents)
    applied = fraction is not None and (not minimum_to_keep_pairs or fraction * count >= 2)
    common = common_fingerprints(documents, fraction) if applied else frozenset()
    return SharedCodeFilter(fraction, count, applied, common | template, len(template))
