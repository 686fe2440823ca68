"""The fast paths of benchmark.integrity.winnowing against plain readings of Dolos.

The module computes k-grams with one numpy correlation, winnows with a vectorised window
minimum (falling back on Dolos' loop when its tie rule matters) and tokenizes with a
cursor walk over token codes; each is checked here against the straightforward version
(Dolos' loops as written, a recursive walk over ``named_children``)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from benchmark.integrity import winnowing
from benchmark.integrity.winnowing import (
    KGRAM_LENGTH,
    _python_parser,
    _rolling_hashes,
    _winnow_array,
    _winnow_loop,
    fingerprint,
    kgram_hashes,
    python_tokens,
    tokenize,
    winnow,
)
from tests.support.integrity_corpus import PAIRS, REFERENCE, UNRELATED

ODD_CODE = {
    "empty": "",
    "comments": "# only\n# comments\n",
    "nested": "x = " + "(" * 60 + "1" + ")" * 60 + "\ny = [[[[1]]]]  # tail\n" * 20,
    "broken": "def f(:\n    x = = 3\n" * 15 + "class A(\n",
    "unicode": "s = 'héllo 😀'\n" * 20 + "def f(é):\n    return é + '日本'  # ü\n" * 8,
    "crlf": REFERENCE.replace("\n", "\r\n"),
    "repeated": "import os\n" * 120 + "a = 1\n" * 200,
}
TEXTS = {"reference": REFERENCE, "unrelated": UNRELATED, **ODD_CODE} | {
    f"{name}-{side}": pair[side] for name, pair in PAIRS.items() for side in (0, 1)
}


def _reference_python_tokens(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Dolos' ``tokenizeNode`` read plainly: recursion over named children, a node's
    end cut at its first named child's start, rows counted by newlines."""
    data = text.encode("utf-8")
    tokens: list[str] = []
    rows: list[tuple[int, int]] = []

    def visit(node) -> None:
        children = node.named_children
        end = children[0].start_byte if children else node.end_byte
        span = (data.count(b"\n", 0, node.start_byte), data.count(b"\n", 0, end))
        kept = "comment" not in node.type
        if kept:
            tokens.extend(["(", node.type])
            rows.extend([span, span])
        for child in children:
            visit(child)
        if kept:
            tokens.append(")")
            rows.append(span)

    visit(_python_parser().parse(data).root_node)
    return tokens, rows


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_python_tokens_and_rows_are_the_plain_walk(name):
    expected = _reference_python_tokens(TEXTS[name])
    assert python_tokens(TEXTS[name]) == expected
    assert tokenize(TEXTS[name], "python") == expected


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_fingerprints_are_the_plain_pipeline(name):
    tokens, rows = _reference_python_tokens(TEXTS[name])
    selected = _winnow_loop(_rolling_hashes(tokens))
    hashes = [value for value, _ in selected]
    lines = []
    for _, start in selected:
        first, last = rows[start], rows[start + KGRAM_LENGTH - 1]
        lines.append((min(first[0], last[0]) + 1, max(first[1], last[1]) + 1))
    result = fingerprint(TEXTS[name], "python")
    assert (result.hashes, result.lines, result.counts) == (hashes, lines, Counter(hashes))
    assert result.line_bounds == ([a for a, _ in lines], [b for _, b in lines])


def test_kgram_hashes_are_the_rolling_hash():
    rng = random.Random(3)
    words = ["(", ")", "module", "identifier", "call", "é", "日本", "😀"]
    for length in (0, 1, KGRAM_LENGTH - 1, KGRAM_LENGTH, KGRAM_LENGTH + 1, 700):
        tokens = [rng.choice(words) for _ in range(length)]
        assert kgram_hashes(tokens) == _rolling_hashes(tokens)
        assert kgram_hashes(tokens, 5) == _rolling_hashes(tokens, 5)


def _sequences():
    rng = random.Random(5)
    for alphabet in (1, 2, 3, 7, 40, 2**25):
        for length in (0, 1, 16, 17, 18, 33, 34, 35, 120, 1500):
            yield [rng.randrange(alphabet) for _ in range(length)]
    for period in (1, 2, 8, 16, 17, 18, 25):  # repeated code: equal k-grams at a distance
        cycle = [rng.randrange(2**25) for _ in range(period)]
        yield (cycle * (400 // period + 1))[:400]
        yield [rng.randrange(2**25) for _ in range(50)] + cycle * 30 + cycle[:3]


def test_vectorised_winnowing_is_dolos_loop(monkeypatch):
    followed = []

    def counted(hashes, chosen, ties, window):
        followed.append(len(ties))
        return follow_dolos(hashes, chosen, ties, window)

    follow_dolos = winnowing._follow_dolos
    monkeypatch.setattr(winnowing, "_follow_dolos", counted)
    sequences = list(_sequences())
    for hashes in sequences:
        for window in (17, 4, 1):
            values, indexes = _winnow_array(np.array(hashes, dtype=np.int64), window)
            got = list(zip(values.tolist(), indexes.tolist(), strict=True))
            assert got == _winnow_loop(hashes, window), (hashes, window)
    # both ways were taken: rightmost minima only, and Dolos' loop followed from ties
    assert 0 < len(followed) < len(sequences) * 3


def test_winnow_of_tokens_is_dolos_loop_over_the_rolling_hash():
    rng = random.Random(9)
    for length in (0, 30, 400):
        tokens = [rng.choice("abc") for _ in range(length)]
        assert winnow(tokens) == _winnow_loop(_rolling_hashes(tokens))


def _reference_fragments(a, b) -> list[tuple]:
    """Dolos' ``buildFragments`` and ``squash`` read plainly (loops, chains by identity)."""
    b_positions: dict[int, list[int]] = {}
    for index, value in enumerate(b.hashes):
        b_positions.setdefault(value, []).append(index)
    pairs = sorted((i, j) for i, value in enumerate(a.hashes) for j in b_positions.get(value, ()))
    runs: dict[tuple[int, int], list[int]] = {}
    chains: list[list[int]] = []
    for i, j in pairs:
        chain = runs.pop((i, j), None)
        if chain is None:
            chain = [i, j, i, j]
            chains.append(chain)
        else:
            chain[2], chain[3] = i, j
        runs[(i + 1, j + 1)] = chain
    by_start = sorted(chains, key=lambda c: (c[0], c[2]))
    by_end = sorted(by_start, key=lambda c: (c[2], c[0]))
    seen, removed, k = set(), set(), 0
    for started in by_start:
        if id(started) in seen:
            continue
        while by_end[k] is not started:
            candidate = by_end[k]
            seen.add(id(candidate))
            if (
                started[0] <= candidate[0]
                and candidate[2] <= started[2]
                and started[1] <= candidate[1]
                and candidate[3] <= started[3]
            ):
                removed.add(id(candidate))
            k += 1
        k += 1
    result = []
    for i0, j0, i1, j1 in (c for c in by_start if id(c) not in removed):
        a_lines = (min(x for x, _ in a.lines[i0 : i1 + 1]), max(y for _, y in a.lines[i0 : i1 + 1]))
        b_lines = (min(x for x, _ in b.lines[j0 : j1 + 1]), max(y for _, y in b.lines[j0 : j1 + 1]))
        result.append((a_lines, b_lines, i1 - i0 + 1))
    return result


def _random_fingerprints(rng: random.Random, alphabet: int, length: int):
    hashes = [rng.randrange(alphabet) for _ in range(length)]
    lines, line = [], 1
    for _ in hashes:
        line += rng.randrange(3)
        lines.append((line, line + rng.randrange(4)))
    return winnowing.Fingerprints(hashes, lines, Counter(hashes))


def test_fragments_are_dolos_chains_and_squash():
    rng = random.Random(13)
    for _ in range(400):
        alphabet = rng.choice([1, 2, 3, 5, 12, 100])
        a = _random_fingerprints(rng, alphabet, rng.randrange(0, 60))
        b = _random_fingerprints(rng, alphabet, rng.randrange(0, 60))
        if rng.random() < 0.5 and a.hashes:  # copied runs
            start = rng.randrange(len(a.hashes))
            b.hashes[:0] = a.hashes[start : start + rng.randrange(1, 30)]
            b.lines[:0] = [(1, 2)] * (len(b.hashes) - len(b.lines))
            b = winnowing.Fingerprints(b.hashes, b.lines, Counter(b.hashes))
        got = [(f.a_lines, f.b_lines, f.kgrams) for f in winnowing.fragments(a, b)]
        assert got == _reference_fragments(a, b)
