"""Code similarity as Dolos measures it (MLE-bench's plagiarism check).

MLE-bench compares a run's code with the competition's reference notebooks using Dolos
(``@dodona/dolos-lib``, default options). This module is the same algorithm in Python,
read from Dolos' own source (``dolos-lib`` 3.5.1 / ``dolos-core`` 1.2.1):

* **Tokens** (``CodeTokenizer.tokenizeNode``): a pre-order walk of the tree-sitter syntax
  tree over *named* nodes only, emitting ``"("``, the node's type, the children, ``")"``;
  nodes whose type contains ``"comment"`` are left out (``includeComments`` is off).
  Identifiers, literals and operators therefore do not matter, only the tree's shape.
  Python is parsed with the same grammar Dolos ships (tree-sitter-python 0.23.6), so
  the token streams are identical. ``.ipynb``: the code cells joined (Dolos has no
  notebook reader; IPython ``%``/``!`` lines are dropped so that the rest parses).
  ``.R``: a regex tokenizer (kinds of lexemes, names collapsed), an approximation.
* **Token hash** (``TokenHash``): ``h = ((h + charCode) * 747287) % 33554393`` per char.
* **k-grams** (``RollingHash``): Rabin-Karp over token hashes, k = 23, base 4194301,
  modulus 33554393.
* **Winnowing** (``WinnowFilter``): window of 17 k-gram hashes, the rightmost minimum
  is selected each time it changes (Schleimer et al.), including the first window.
* **Pair similarity** (``Pair``): ``(covered_A + covered_B) / (total_A + total_B)``
  where ``total_X`` is the number of fingerprints selected in X (with repeats) and
  ``covered_X`` the number of those whose hash also occurs in the other file. With
  Dolos' defaults no fingerprint is ignored, so the value depends on the two files only.
* **Fragments** (``Pair.buildFragments``): paired occurrences of shared fingerprints
  chained when both k-gram indexes advance by one; fragments contained in another on
  both sides are dropped; each is reported as line ranges (1-based, inclusive).
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

KGRAM_LENGTH = 23
KGRAMS_IN_WINDOW = 17
_MOD = 33554393
_ROLL_BASE = 4194301
_TOKEN_BASE = 747287
_MAX_SAFE_INTEGER = 2**53 - 1

LANGUAGES = ("python", "r")


class UnsupportedLanguage(ValueError):
    pass


@dataclass(frozen=True)
class Fragment:
    """A run of matching code: 1-based inclusive line ranges in each file."""

    a_lines: tuple[int, int]
    b_lines: tuple[int, int]
    kgrams: int

    def as_dict(self) -> dict:
        return {"a_lines": list(self.a_lines), "b_lines": list(self.b_lines), "kgrams": self.kgrams}


@dataclass(frozen=True)
class PairSimilarity:
    similarity: float
    fragments: list[Fragment] = field(default_factory=list)


@dataclass
class Fingerprints:
    """One file's winnowed fingerprints: hash per selected k-gram (in order) and the line
    range each k-gram spans."""

    hashes: list[int]
    lines: list[tuple[int, int]]
    counts: Counter

    @property
    def total(self) -> int:
        return len(self.hashes)


# ---------------------------------------------------------------- tokenizers


@lru_cache(maxsize=1)
def _python_parser():
    import tree_sitter
    import tree_sitter_python

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))


def python_tokens(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Dolos' token stream of Python source, with each token's (start row, end row)
    (0-based; a node's end is cut at its first child's start, as Dolos does)."""
    tokens, rows_of = _python_tokens_lazy(text)
    return tokens, [rows_of(i) for i in range(len(tokens))]


def _python_tokens_lazy(text: str):
    """The tokens, and a function giving a token's (start row, end row) on demand (only
    the selected k-grams' ends need rows)."""
    data = text.encode("utf-8")
    tokens, owner, starts, ends = _python_token_nodes(data)
    newlines = [match.start() for match in re.finditer(b"\n", data)]

    def rows_of(index: int) -> tuple[int, int]:
        node = owner[index]
        return (
            bisect.bisect_left(newlines, starts[node]),
            bisect.bisect_left(newlines, ends[node]),
        )

    return tokens, rows_of


def _python_token_nodes(data: bytes) -> tuple[list[str], list[int], list[int], list[int]]:
    """Tokens, the node each token belongs to, and each node's start and (shortened) end
    byte. A pre-order walk with a cursor, descending into named nodes only (Dolos recurses
    over ``namedChildren``)."""
    tree = _python_parser().parse(data)
    tokens: list[str] = []
    owner: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    frames: list[int] = []  # node number, or -1 - number for a comment
    first_child_seen: list[bool] = []
    cursor = tree.walk()
    append_token = tokens.append
    append_owner = owner.append
    while True:
        node = cursor.node
        if node.is_named:
            start = node.start_byte
            if first_child_seen and not first_child_seen[-1]:
                parent = frames[-1]
                ends[parent if parent >= 0 else -1 - parent] = start
                first_child_seen[-1] = True
            number = len(starts)
            starts.append(start)
            ends.append(node.end_byte)
            kind = node.type
            if "comment" in kind:
                frames.append(-1 - number)
            else:
                frames.append(number)
                append_token("(")
                append_token(kind)
                append_owner(number)
                append_owner(number)
            first_child_seen.append(False)
            if cursor.goto_first_child():
                continue
            first_child_seen.pop()
            if frames.pop() >= 0:
                append_token(")")
                append_owner(number)
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return tokens, owner, starts, ends
            first_child_seen.pop()
            number = frames.pop()
            if number >= 0:
                append_token(")")
                append_owner(number)


_R_TOKEN = re.compile(
    r"""(?P<comment>\#[^\n]*)
      |(?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
      |(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?L?i?)
      |(?P<keyword>\b(?:function|if|else|for|while|repeat|return|next|break|in|TRUE|FALSE|NULL|NA|Inf|NaN|library|require)\b)
      |(?P<name>[A-Za-z_.][A-Za-z0-9_.]*|`[^`]*`)
      |(?P<op><<-|->>|<-|->|%[^%\n]*%|\|>|==|!=|<=|>=|&&|\|\||::|[-+*/^<>=!&|~$@:?(){}\[\],;])
    """,
    re.VERBOSE,
)


def r_tokens(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """A regex tokenizer for R: names become ``name``, numbers ``number``, strings
    ``string``; keywords and operators are kept; comments dropped."""
    tokens: list[str] = []
    rows: list[tuple[int, int]] = []
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    for match in _R_TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "comment":
            continue
        token = match.group() if kind in ("keyword", "op") else kind
        row = bisect.bisect_right(line_starts, match.start()) - 1
        tokens.append(token)
        rows.append((row, row + match.group().count("\n")))
    return tokens, rows


def notebook_code(text: str) -> str:
    """The code cells of a ``.ipynb`` joined by blank lines (IPython magics and shell
    escapes blanked, keeping line numbers)."""
    notebook = json.loads(text)
    cells = notebook.get("cells", [])
    parts = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        lines = [
            "" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")
        ]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def language_of(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith((".py", ".ipynb")):
        return "python"
    if lower.endswith(".r"):
        return "r"
    return None


def source_text(name: str, text: str) -> str:
    """The code of a file as compared: the code cells of a notebook, else the text."""
    if name.lower().endswith(".ipynb"):
        try:
            return notebook_code(text)
        except (ValueError, AttributeError, TypeError):
            return ""
    return text


def tokenize(text: str, language: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The token stream and each token's (start row, end row), 0-based."""
    tokens, rows_of = _tokenize_lazy(text, language)
    return tokens, [rows_of(i) for i in range(len(tokens))]


def _tokenize_lazy(text: str, language: str):
    if language == "python":
        return _python_tokens_lazy(text)
    if language == "r":
        tokens, rows = r_tokens(text)
        return tokens, rows.__getitem__
    raise UnsupportedLanguage(f"unsupported language {language!r}: one of {', '.join(LANGUAGES)}")


# ---------------------------------------------------------------- hashing, winnowing


@lru_cache(maxsize=4096)
def token_hash(token: str) -> int:
    value = 0
    data = token.encode("utf-16-le")
    for i in range(0, len(data), 2):  # String.charCodeAt: UTF-16 code units
        value = ((value + (data[i] | data[i + 1] << 8)) * _TOKEN_BASE) % _MOD
    return value


def _mod_pow(base: int, exp: int, mod: int) -> int:
    return pow(base, exp, mod)


_MAX_BASE = _MOD - _mod_pow(_ROLL_BASE, KGRAM_LENGTH, _MOD)


def kgram_hashes(tokens: list[str], k: int = KGRAM_LENGTH) -> list[int]:
    """Dolos' ``RollingHash`` value after each k-gram: the polynomial hash
    ``sum(t[s + m] * 4194301 ** (k - 1 - m)) % 33554393`` of the token hashes, which the
    rolling update ``(base * h + t_new + (mod - base**k % mod) * t_old) % mod`` keeps
    exactly. Computed with numpy (each product < 2**50, a row's sum < 2**55: no overflow)."""
    import numpy as np

    if len(tokens) < k:
        return []
    cache: dict[str, int] = {}
    values = np.fromiter(
        (cache[t] if t in cache else cache.setdefault(t, token_hash(t)) for t in tokens),
        dtype=np.int64,
        count=len(tokens),
    )
    powers = np.array([pow(_ROLL_BASE, k - 1 - m, _MOD) for m in range(k)], dtype=np.int64)
    windows = np.lib.stride_tricks.sliding_window_view(values, k)
    return ((windows * powers).sum(axis=1) % _MOD).tolist()


def winnow(
    tokens: list[str], k: int = KGRAM_LENGTH, window: int = KGRAMS_IN_WINDOW
) -> list[tuple[int, int]]:
    """Dolos' ``WinnowFilter.fingerprints``: (hash, start token index) of each selected
    k-gram, in order. The buffer logic is Dolos' line for line: when the minimum leaves
    the window the buffer is rescanned (oldest to newest, ``<=``: the rightmost minimum
    among the older k-grams wins a tie with the new one), otherwise a new k-gram is
    selected when it is ``<=`` the minimum."""
    buffer_pos = 0
    min_pos = 0
    buffer = [_MAX_SAFE_INTEGER] * window
    selected: list[tuple[int, int]] = []
    append = selected.append
    for file_pos, value in enumerate(kgram_hashes(tokens, k)):
        buffer_pos = (buffer_pos + 1) % window
        buffer[buffer_pos] = value
        if min_pos == buffer_pos:
            i = (buffer_pos + 1) % window
            while i != buffer_pos:
                if buffer[i] <= buffer[min_pos]:
                    min_pos = i
                i = (i + 1) % window
            append((buffer[min_pos], file_pos - (buffer_pos - min_pos) % window))
        elif value <= buffer[min_pos]:
            min_pos = buffer_pos
            append((value, file_pos))
    return selected


def _rolling_hashes(tokens: list[str], k: int = KGRAM_LENGTH) -> list[int]:
    """Dolos' ``RollingHash`` as written (the reference ``kgram_hashes`` is tested against)."""
    max_base = _MOD - _mod_pow(_ROLL_BASE, k, _MOD)
    memory = [0] * k
    rolling = 0
    out = []
    for position, token in enumerate(tokens):
        hashed = token_hash(token)
        rolling = (_ROLL_BASE * rolling + hashed + max_base * memory[position % k]) % _MOD
        memory[position % k] = hashed
        if position >= k - 1:
            out.append(rolling)
    return out


def _js_mod(a: int, b: int) -> int:
    """JavaScript's ``%`` (the sign of the dividend)."""
    r = abs(a) % b
    return -r if a < 0 else r


def fingerprint(text: str, language: str) -> Fingerprints:
    tokens, rows_of = _tokenize_lazy(text, language)
    hashes = []
    lines = []
    for value, start in winnow(tokens):
        hashes.append(value)
        first_row = rows_of(start)
        last_row = rows_of(start + KGRAM_LENGTH - 1)  # Region.merge of the two ends
        lines.append((min(first_row[0], last_row[0]) + 1, max(first_row[1], last_row[1]) + 1))
    return Fingerprints(hashes, lines, Counter(hashes))


# ---------------------------------------------------------------- pairs


def _similarity(a: Fingerprints, b: Fingerprints) -> float:
    denominator = a.total + b.total
    if denominator == 0:
        return 0.0
    small, large = (a.counts, b.counts) if len(a.counts) < len(b.counts) else (b.counts, a.counts)
    covered = 0
    for value, count in small.items():
        other = large.get(value)
        if other:
            covered += count + other
    return covered / denominator


def fragments(a: Fingerprints, b: Fingerprints) -> list[Fragment]:
    """Dolos' ``buildFragments``: chains of paired occurrences, contained ones dropped."""
    b_positions: dict[int, list[int]] = {}
    for index, value in enumerate(b.hashes):
        b_positions.setdefault(value, []).append(index)
    pairs = sorted((i, j) for i, value in enumerate(a.hashes) for j in b_positions.get(value, ()))
    runs: dict[tuple[int, int], list[int]] = {}  # next expected (i, j) -> [i0, j0, i1, j1]
    chains: list[list[int]] = []
    for i, j in pairs:
        chain = runs.pop((i, j), None)
        if chain is None:
            chain = [i, j, i, j]
            chains.append(chain)
        else:
            chain[2], chain[3] = i, j
        runs[(i + 1, j + 1)] = chain
    # Pair.squash, as Dolos does it: walk the fragments by start and by end of their left
    # k-gram range; one that ends before the current one and is contained in it on both
    # sides is dropped (Dolos' linear pass, so not every contained fragment is).
    by_start = sorted(chains, key=lambda c: (c[0], c[2]))
    by_end = sorted(by_start, key=lambda c: (c[2], c[0]))
    seen: set[int] = set()
    removed: set[int] = set()
    j = 0
    for started in by_start:
        if id(started) in seen:
            continue
        while by_end[j] is not started:
            candidate = by_end[j]
            seen.add(id(candidate))
            if (
                started[0] <= candidate[0]
                and candidate[2] <= started[2]
                and started[1] <= candidate[1]
                and candidate[3] <= started[3]
            ):
                removed.add(id(candidate))
            j += 1
        j += 1
    kept = [c for c in by_start if id(c) not in removed]
    result = []
    for i0, j0, i1, j1 in kept:
        a_lines = (
            min(a.lines[x][0] for x in range(i0, i1 + 1)),
            max(a.lines[x][1] for x in range(i0, i1 + 1)),
        )
        b_lines = (
            min(b.lines[x][0] for x in range(j0, j1 + 1)),
            max(b.lines[x][1] for x in range(j0, j1 + 1)),
        )
        result.append(Fragment(a_lines, b_lines, i1 - i0 + 1))
    return result


def similarity(a_text: str, b_text: str, language: str = "python") -> PairSimilarity:
    """Dolos' similarity of two files of ``language`` and their matched fragments."""
    a = fingerprint(a_text, language)
    b = fingerprint(b_text, language)
    return PairSimilarity(_similarity(a, b), fragments(a, b))


@dataclass(frozen=True)
class CorpusMatch:
    submission: str
    reference: str
    similarity: float
    fragments: list[Fragment]

    def as_dict(self) -> dict:
        return {
            "submission": self.submission,
            "reference": self.reference,
            "similarity": round(self.similarity, 6),
            "fragments": [f.as_dict() for f in self.fragments],
        }


@lru_cache(maxsize=2048)
def _fingerprint_named(name: str, text: str, language: str | None) -> Fingerprints | None:
    """A file's fingerprints, kept for the next comparison: a site checks every run of a
    competition against the same references (and other runs), which never change."""
    language = language or language_of(name)
    if language is None:
        return None
    return fingerprint(source_text(name, text), language)


def _scored_pairs(
    submissions: dict[str, str], references: dict[str, str], language: str | None
) -> Iterator[tuple[str, str, float, Fingerprints, Fingerprints]]:
    """Every (submission, reference) pair of one language with its similarity. The
    references' fingerprints are indexed once (hash -> [(reference, count)]), so a
    submission costs one look-up per distinct hash."""
    refs: dict[str, tuple[Fingerprints, str]] = {}
    for name, text in references.items():
        fp = _fingerprint_named(name, text, language)
        if fp is not None:
            refs[name] = (fp, language or language_of(name))
    index: dict[int, list[tuple[str, int]]] = {}
    for name, (fp, _) in refs.items():
        for value, count in fp.counts.items():
            index.setdefault(value, []).append((name, count))
    for sub_name, text in submissions.items():
        sub = _fingerprint_named(sub_name, text, language)
        if sub is None:
            continue
        sub_language = language or language_of(sub_name)
        covered: dict[str, int] = {}
        for value, count in sub.counts.items():
            for ref_name, ref_count in index.get(value, ()):
                covered[ref_name] = covered.get(ref_name, 0) + count + ref_count
        for ref_name, (ref, ref_language) in refs.items():
            if ref_language != sub_language:
                continue
            total = sub.total + ref.total
            yield sub_name, ref_name, covered.get(ref_name, 0) / total if total else 0.0, sub, ref


def compare_corpus(
    submissions: dict[str, str],
    references: dict[str, str],
    threshold: float = 0.6,
    language: str | None = None,
) -> list[CorpusMatch]:
    """Every (submission, reference) pair whose similarity is at least ``threshold``,
    highest first, with fragments. ``language`` None: each file's from its extension
    (``.py``, ``.ipynb``, ``.R``); files of other kinds are skipped. Only files of one
    language are paired."""
    matches = [
        CorpusMatch(sub_name, ref_name, score, fragments(sub, ref))
        for sub_name, ref_name, score, sub, ref in _scored_pairs(submissions, references, language)
        if score >= threshold
    ]
    matches.sort(key=lambda m: (-m.similarity, m.submission, m.reference))
    return matches


def best_match(
    submissions: dict[str, str], references: dict[str, str], language: str | None = None
) -> CorpusMatch | None:
    """The most similar (submission, reference) pair, however low, with its fragments
    (computed for that pair only); None when no pair of one language exists. Ties go
    to the first names in order."""
    best = None
    for sub_name, ref_name, score, sub, ref in _scored_pairs(submissions, references, language):
        key = (-score, sub_name, ref_name)
        if best is None or key < best[0]:
            best = (key, sub_name, ref_name, score, sub, ref)
    if best is None:
        return None
    _, sub_name, ref_name, score, sub, ref = best
    return CorpusMatch(sub_name, ref_name, score, fragments(sub, ref))
