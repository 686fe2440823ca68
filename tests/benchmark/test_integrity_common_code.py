"""Fingerprints set aside as Dolos sets them aside: those most files share
(``maxFingerprintPercentage``) and a template's (the ignored file), on honest solutions that
share a scaffold's skeleton. Parity with Dolos itself is in test_integrity_dolos.py."""

from __future__ import annotations

import itertools

import pytest

from benchmark.integrity.common_code import (
    FingerprintShareRefused,
    common_fingerprints,
    shared_code_filter,
    template_fingerprints,
)
from benchmark.integrity.winnowing import best_match, compare_corpus, file_fingerprints
from cli import main as cli
from tests.support.integrity_corpus import renamed
from tests.support.scaffold_corpus import SOLUTIONS, TEMPLATE

THRESHOLD = 0.6


def pairs_at_threshold(files: dict[str, str], ignored=frozenset()) -> list[tuple[str, str]]:
    """Every pair of ``files`` (each once, the earlier name first as Dolos orders them)
    at or above the plagiarism threshold."""
    names = sorted(files)
    found = []
    for index, name in enumerate(names):
        later = {other: files[other] for other in names[index + 1 :]}
        for match in compare_corpus({name: files[name]}, later, THRESHOLD, ignored=ignored):
            found.append((match.submission, match.reference))
    return found


def file_filter(files: dict[str, str], fraction: float) -> frozenset[int]:
    documents = [[file_fingerprints(name, text)] for name, text in files.items()]
    return shared_code_filter(documents, fraction, minimum_to_keep_pairs=False).ignored


def test_honest_scaffold_solutions_reach_the_threshold_without_the_option_only():
    """The issue's finding on AIDE's own solutions, on ours: many honest pairs at 0.6 on
    the skeleton alone; none once fingerprints in more than half the files are ignored."""
    assert len(pairs_at_threshold(SOLUTIONS)) >= 8
    assert pairs_at_threshold(SOLUTIONS, file_filter(SOLUTIONS, 0.5)) == []


def test_a_renamed_copy_is_still_found_with_the_option():
    files = {**SOLUTIONS, "copy-of-house-prices.py": renamed(SOLUTIONS["house-prices.py"])}
    pairs = pairs_at_threshold(files, file_filter(files, 0.5))
    assert pairs == [("copy-of-house-prices.py", "house-prices.py")]


def test_the_scaffolds_template_sets_its_skeleton_aside():
    ignored = template_fingerprints({"template.py": TEMPLATE})
    assert len(pairs_at_threshold(SOLUTIONS, ignored)) < len(pairs_at_threshold(SOLUTIONS))
    # Not counted either: a file made of the template only is like nothing once ignored.
    match = best_match({"t.py": TEMPLATE}, {"s.py": SOLUTIONS["playground-s3e9.py"]}, None, ignored)
    assert match.similarity == 0.0


def test_a_fingerprint_counts_once_per_document_and_strictly_above_the_share():
    a = file_fingerprints("a.py", SOLUTIONS["house-prices.py"])
    b = file_fingerprints("b.py", SOLUTIONS["forest-cover-type.py"])
    shared_ab = set(a.counts) & set(b.counts)
    assert shared_ab
    # In 2 of 4 documents: not more than half of them, so kept.
    assert not common_fingerprints([[a], [b], [None], [None]], 0.5) & shared_ab
    # The same file twice in one document counts once: still 2 of 4.
    assert not common_fingerprints([[a, a], [b], [], []], 0.5) & shared_ab
    # In 2 of 3: more than half.
    assert shared_ab <= common_fingerprints([[a], [b], []], 0.5)


def test_the_filter_stands_aside_when_too_few_documents_keep_a_pair():
    """With a fraction f and N documents, what two share is ignored when 2 > f * N: the
    site's peer comparison does not filter then (and says so) rather than clear every
    pair; the command, like Dolos, applies it from three files."""
    docs = [[file_fingerprints(n, SOLUTIONS[n])] for n in sorted(SOLUTIONS)[:3]]
    assert not shared_code_filter(docs, 0.5).applied
    assert shared_code_filter(docs, 0.5, minimum_to_keep_pairs=False).applied
    four = docs + [[file_fingerprints("x.py", SOLUTIONS["house-prices.py"])]]
    assert shared_code_filter(four, 0.5).as_dict()["applied"] is True


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5])
def test_a_fraction_outside_0_to_1_is_refused(fraction):
    with pytest.raises(FingerprintShareRefused, match="above 0 and at most 1"):
        common_fingerprints([], fraction)


def test_the_command_refuses_what_dolos_refuses(tmp_path, capsys):
    subs, refs = tmp_path / "subs", tmp_path / "refs"
    subs.mkdir()
    refs.mkdir()
    (subs / "a.py").write_text(SOLUTIONS["house-prices.py"])
    (refs / "b.py").write_text(SOLUTIONS["forest-cover-type.py"])
    argv = ["similarity", "--submissions", str(subs), "--references", str(refs)]
    assert cli.main([*argv, "--max-fingerprint-percentage", "0.5"]) == 2
    assert "three files or more" in capsys.readouterr().err
    (refs / "c.py").write_text(SOLUTIONS["digit-recognizer.py"])
    assert cli.main([*argv, "--max-fingerprint-percentage", "0"]) == 2
    assert "above 0 and at most 1" in capsys.readouterr().err
    assert cli.main([*argv, "--ignore", str(tmp_path / "missing.py")]) == 2
    assert "not a .py" in capsys.readouterr().err
    assert cli.main([*argv, "--max-fingerprint-percentage", "0.5"]) == 0


def test_every_pair_is_symmetric_without_ignored_fingerprints():
    """Without ignored fingerprints the order of a pair does not matter (with them,
    Dolos' release makes the left file's count matter: see winnowing)."""
    for a, b in itertools.islice(itertools.combinations(sorted(SOLUTIONS), 2), 20):
        one = best_match({a: SOLUTIONS[a]}, {b: SOLUTIONS[b]}).similarity
        two = best_match({b: SOLUTIONS[b]}, {a: SOLUTIONS[a]}).similarity
        assert one == pytest.approx(two)
