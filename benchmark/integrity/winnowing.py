"""Code similarity as Dolos measures it (MLE-bench's plagiarism check).

MLE-bench compares a run's code with the competition's reference notebooks using Dolos
(``@dodona/dolos-lib``, default options). This module is the same algorithm in Python, read
from Dolos' own source (``dolos-lib`` 3.5.1 / ``dolos-core`` 1.2.1): tree-sitter tokens,
token hashes, k-grams (k = 23), winnowing (window 17), pair similarity with ignored
fingerprints, and fragments. It follows the pinned release where it differs from upstream
(``DOLOS_RIGHT_IGNORED_FROM_LEFT``), so a pair's figure depends on which file is ``left``.
Each step, with its constants: docs/integrity.md. For speed the steps run on numpy arrays;
tests/benchmark/test_integrity_speedup_equivalence.py checks them against plain loops.
"""

from __future__ import annotations

import bisect
import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

KGRAM_LENGTH = 23
KGRAMS_IN_WINDOW = 17
_MOD = 33554393
_ROLL_BASE = 4194301
_TOKEN_BASE = 747287
_MAX_SAFE_INTEGER = 2**53 - 1

LANGUAGES = ("python", "r")

# dolos-core 1.2.1's Pair: the right file's ignored count is the left file's (see above).
# tests/benchmark/test_integrity_dolos.py fails when the pinned Dolos stops doing so.
DOLOS_RIGHT_IGNORED_FROM_LEFT = True


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

    @cached_property
    def hash_array(self):
        """``hashes`` as a numpy int64 array (``fingerprint`` fills it in)."""
        import numpy as np

        return np.array(self.hashes, dtype=np.int64)

    @cached_property
    def line_bounds(self) -> tuple[list[int], list[int]]:
        """The k-grams' first lines and last lines as two lists (``fingerprint`` fills it
        in; fragments take the min and max of slices of them)."""
        return [first for first, _ in self.lines], [last for _, last in self.lines]


# ---------------------------------------------------------------- tokenizers


@lru_cache(maxsize=1)
def _python_parser():
    import tree_sitter
    import tree_sitter_python

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))


# The Python tokenizer works on token codes rather than strings: 0 is "(", 1 is ")", and
# each named node type gets the next code when a node of that type is first met. A node's
# type and whether it is named are functions of its ``kind_id`` (the alias-resolved
# symbol), so the walk looks the code up by ``kind_id`` and never builds type strings.
_OPEN, _CLOSE = 0, 1
_ANONYMOUS, _COMMENT = -1, -2
_CLOSING = -3  # the walk's event for node n closing is _CLOSING - n
_PY_CODES: dict[int, int] = {}  # kind_id -> code, or _ANONYMOUS / _COMMENT
_PY_TOKENS: list[str] = ["(", ")"]  # code -> token
_PY_HASHES = None  # numpy array: code -> token_hash(token), rebuilt when codes are added
_PY_LOCK = threading.Lock()


def _python_code(node) -> int:
    """The code of ``node``'s kind, learnt from this first node of that kind."""
    with _PY_LOCK:
        code = _PY_CODES.get(node.kind_id)
        if code is None:
            if not node.is_named:
                code = _ANONYMOUS
            elif "comment" in node.type:  # Dolos' includeComments is off
                code = _COMMENT
            else:
                code = len(_PY_TOKENS)
                _PY_TOKENS.append(node.type)
            _PY_CODES[node.kind_id] = code
    return code


def _python_token_hashes(codes):
    """The token hashes (numpy int64) of an array of token codes."""
    import numpy as np

    global _PY_HASHES
    table = _PY_HASHES
    if table is None or len(table) < len(_PY_TOKENS):
        table = _PY_HASHES = np.array([token_hash(t) for t in list(_PY_TOKENS)], dtype=np.int64)
    return table[codes]


def _python_walk(data: bytes) -> tuple[list[int], list]:
    """The named nodes of UTF-8 Python source as Dolos walks them: a list of events
    (a node's code when it opens, ``_COMMENT`` for a comment; ``_CLOSING - number`` when
    a node other than a comment closes) and the list of the nodes, numbered in pre-order,
    comments included (tree-sitter nodes, read only for the few rows needed).

    One pre-order walk with a tree cursor (no recursion, no lists of children, as little
    as possible per node); it descends into named nodes only, as Dolos recurses over
    ``namedChildren``, and steps over anonymous ones."""
    tree = _python_parser().parse(data)
    cursor = tree.walk()
    events: list[int] = []
    nodes: list = []
    parents: list[int] = []  # the nodes whose children are being walked (-1: a comment)
    anonymous, comment, closing = _ANONYMOUS, _COMMENT, _CLOSING
    code_of = _PY_CODES.get
    add_event, add_node = events.append, nodes.append
    push, pop = parents.append, parents.pop
    goto_first_child, goto_next_sibling = cursor.goto_first_child, cursor.goto_next_sibling
    goto_parent = cursor.goto_parent
    while True:
        node = cursor.node
        code = code_of(node.kind_id)
        if code is None:
            code = _python_code(node)
        if code != anonymous:
            number = len(nodes)
            add_node(node)
            add_event(code)
            if goto_first_child():
                push(-1 if code == comment else number)
                continue
            if code != comment:
                add_event(closing - number)
        while not goto_next_sibling():
            if not goto_parent():
                return events, nodes
            number = pop()
            if number >= 0:
                add_event(closing - number)


def _python_tokens_lazy(text: str):
    """The token codes and token hashes (numpy), and a function giving the (start rows,
    end rows) of the tokens at an array of indexes (0-based; a node's end is cut at its
    first named child's start, as Dolos does). Fingerprints only need the rows of their
    k-grams' ends, so rows are not computed for every token."""
    import numpy as np

    data = text.encode("utf-8")
    events, nodes = _python_walk(data)
    # Token codes from the events: an opening one gives "(" and the node type (nothing
    # for a comment), a closing one ")"; each token's node number alongside.
    all_events = np.array(events, dtype=np.intp)
    closing = all_events <= _CLOSING
    opening = ~closing
    opened_at = np.flatnonzero(opening)  # node number -> index of its opening event
    event_nodes = np.cumsum(opening) - 1  # an opening event's node: the count of openings
    event_nodes[closing] = _CLOSING - all_events[closing]
    event_codes = np.where(closing, _CLOSE, all_events)
    if 2 * len(opened_at) != len(events):  # some nodes are comments: they make no tokens
        kept = event_codes != _COMMENT
        event_codes, event_nodes, closing = event_codes[kept], event_nodes[kept], closing[kept]
    width = 2 - closing  # tokens per event
    codes = np.repeat(event_codes, width)
    owner = np.repeat(event_nodes, width)
    codes[(np.cumsum(width) - width)[~closing]] = _OPEN
    # the row of byte b: the number of newlines before it
    row_at = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum(np.frombuffer(data, dtype=np.uint8) == ord("\n"), out=row_at[1:])

    def rows_of(indexes):
        numbers = owner[indexes]
        # a node with a named child (the next event after its opening is not its closing)
        # ends, for Dolos, where that child (node number + 1) starts
        has_child = (all_events[opened_at[numbers] + 1] > _CLOSING).tolist()
        numbers = numbers.tolist()
        starts = [nodes[n].start_byte for n in numbers]
        ends = [
            nodes[n + 1].start_byte if child else nodes[n].end_byte
            for n, child in zip(numbers, has_child, strict=True)
        ]
        return row_at[starts], row_at[ends]

    return codes, _python_token_hashes(codes), rows_of


def python_tokens(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Dolos' token stream of Python source, with each token's (start row, end row)
    (0-based; a node's end is cut at its first child's start, as Dolos does)."""
    import numpy as np

    codes, _, rows_of = _python_tokens_lazy(text)
    first, last = rows_of(np.arange(len(codes)))
    rows = list(zip(first.tolist(), last.tolist(), strict=True))
    return [_PY_TOKENS[code] for code in codes.tolist()], rows


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
    if language == "python":
        return python_tokens(text)
    if language == "r":
        return r_tokens(text)
    raise UnsupportedLanguage(f"unsupported language {language!r}: one of {', '.join(LANGUAGES)}")


def _tokenize_lazy(text: str, language: str):
    """The token hashes (numpy int64) and a function giving the rows of tokens at an
    array of indexes (see ``_python_tokens_lazy``)."""
    if language == "python":
        _, values, rows_of = _python_tokens_lazy(text)
        return values, rows_of
    if language == "r":
        import numpy as np

        tokens, rows = r_tokens(text)
        first = np.array([row for row, _ in rows], dtype=np.int64)
        last = np.array([row for _, row in rows], dtype=np.int64)
        return _token_values(tokens), lambda indexes: (first[indexes], last[indexes])
    raise UnsupportedLanguage(f"unsupported language {language!r}: one of {', '.join(LANGUAGES)}")


# ---------------------------------------------------------------- hashing, winnowing


@lru_cache(maxsize=4096)
def token_hash(token: str) -> int:
    value = 0
    data = token.encode("utf-16-le")
    for i in range(0, len(data), 2):  # String.charCodeAt: UTF-16 code units
        value = ((value + (data[i] | data[i + 1] << 8)) * _TOKEN_BASE) % _MOD
    return value


def _token_values(tokens: list[str]):
    """The token hashes (numpy int64) of a list of tokens."""
    import numpy as np

    return np.fromiter(map(token_hash, tokens), dtype=np.int64, count=len(tokens))


def _mod_pow(base: int, exp: int, mod: int) -> int:
    return pow(base, exp, mod)


@lru_cache(maxsize=8)
def _powers(k: int):
    """``4194301 ** (k - 1 - m) % 33554393`` for m in 0..k-1 (numpy int64, read-only)."""
    import numpy as np

    powers = np.array([pow(_ROLL_BASE, k - 1 - m, _MOD) for m in range(k)], dtype=np.int64)
    powers.flags.writeable = False
    return powers


def _kgram_array(values, k: int = KGRAM_LENGTH):
    """Dolos' ``RollingHash`` value after each k-gram of the token hashes ``values``
    (numpy int64): the polynomial hash ``sum(t[s + m] * 4194301 ** (k - 1 - m)) %
    33554393``, which the rolling update ``(base * h + t_new + (mod - base**k % mod) *
    t_old) % mod`` keeps exactly. One correlation of the token hashes with the powers:
    each product is < 2**50, a sum of k of them < 2**63 for k < 8192, so int64 is exact."""
    import numpy as np

    if len(values) < k:
        return np.zeros(0, dtype=np.int64)
    return np.correlate(values, _powers(k), "valid") % _MOD


def kgram_hashes(tokens: list[str], k: int = KGRAM_LENGTH) -> list[int]:
    """Dolos' ``RollingHash`` value after each k-gram of ``tokens`` (see ``_kgram_array``)."""
    return _kgram_array(_token_values(tokens), k).tolist()


def _winnow_loop(hashes: list[int], window: int = KGRAMS_IN_WINDOW) -> list[tuple[int, int]]:
    """Dolos' ``WinnowFilter.fingerprints`` line for line over k-gram hashes: (hash, index)
    of each selected k-gram, in order. When the minimum leaves the window the buffer is
    rescanned (oldest to newest, ``<=``: the rightmost minimum among the older k-grams
    wins a tie with the new one), otherwise a new k-gram is selected when it is ``<=``
    the minimum. The reference for ``_winnow_array``."""
    buffer_pos = 0
    min_pos = 0
    buffer = [_MAX_SAFE_INTEGER] * window
    selected: list[tuple[int, int]] = []
    append = selected.append
    for file_pos, value in enumerate(hashes):
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


def _winnow_array(hashes, window: int = KGRAMS_IN_WINDOW):
    """``_winnow_loop`` vectorised: (hashes, indexes) of the selected k-grams as numpy
    arrays, given the k-gram hashes as one.

    Dolos' choice after k-gram p is always a minimum of the window of k-grams
    [p - window + 1, p] (fewer at first: its buffer starts full of MAX_SAFE_INTEGER), and
    it records the choice whenever it changes. Among equal minima it takes the rightmost
    (a new k-gram ``<=`` the chosen one takes over), with one exception: when the chosen
    k-gram leaves the window, Dolos rescans the older k-grams before the new one, so
    there the new k-gram loses a tie. So the rightmost minimum of every window is
    computed at once, and Dolos' loop is followed only from each such tie (repeated
    k-grams) until its choice is the rightmost minimum again."""
    import numpy as np

    count = len(hashes)
    if count == 0:
        return hashes, np.zeros(0, dtype=np.intp)
    steps = np.arange(count)
    # Rightmost minima: the minimum in each window of the keys hash * count + (count - 1 -
    # index), which are unique and ordered by hash, then by index reversed (< 2**63 while
    # count < 2**37).
    keys = hashes * count + (count - 1 - steps)
    keys = np.concatenate((np.full(window - 1, _NO_KEY, dtype=np.int64), keys))
    chosen = count - 1 - _sliding_min(keys, window) % count
    if count > window > 1:  # (a window of 1 has no older k-grams to tie with)
        later = steps[window:]
        rescans = later[chosen[later - 1] == later - window]  # the chosen one left the window
        newest = rescans[chosen[rescans] == rescans]  # and the new k-gram became the choice
        windows = np.lib.stride_tricks.sliding_window_view(hashes, window)  # row r: r, r + 1, ..
        older = windows[newest - window + 1, :-1].min(axis=1)  # the window's older k-grams
        ties = newest[older == hashes[newest]]  # ... tied with an older one
        if len(ties):
            chosen = _follow_dolos(hashes, chosen, ties.tolist(), window)
    changes = np.flatnonzero(chosen[1:] != chosen[:-1]) + 1
    indexes = chosen[np.concatenate(([0], changes))]
    return hashes[indexes], indexes


_NO_KEY = 2**62  # before the first k-gram (Dolos' buffer starts full of MAX_SAFE_INTEGER)


def _sliding_min(values, window: int):
    """The minimum of ``values[p : p + window]`` for each p: minima of spans of 1, 2, 4, ...
    values, then of two overlapping spans (a few whole-array operations)."""
    import numpy as np

    span = 1
    while span * 2 <= window:
        values = np.minimum(values[:-span], values[span:])
        span *= 2
    if span < window:
        values = np.minimum(values[: len(values) - (window - span)], values[window - span :])
    return values


def _follow_dolos(hashes, chosen, ties: list[int], window: int):
    """Dolos' choice after each k-gram, given the rightmost minima ``chosen`` and the
    steps where Dolos' tie rule first makes them differ: from each of those on, Dolos'
    loop (``_winnow_loop`` with positions for buffer slots) is followed until its choice
    is the rightmost minimum again, which it then stays until the next such step."""
    dolos = chosen.copy()
    count = len(hashes)
    value = hashes.item
    resume = 0
    for step in ties:
        if step < resume:  # within a stretch already followed
            continue
        current = chosen.item(step - 1)  # Dolos' choice so far, the same
        while True:
            if current == step - window:  # it leaves: rescan, the new k-gram first
                current = step
                for older in range(step - window + 1, step):  # oldest first, <=
                    if value(older) <= value(current):
                        current = older
            elif value(step) <= value(current):
                current = step
            dolos[step] = current
            step += 1
            if step == count or current == chosen.item(step - 1):
                break
        resume = step
    return dolos


def winnow(
    tokens: list[str], k: int = KGRAM_LENGTH, window: int = KGRAMS_IN_WINDOW
) -> list[tuple[int, int]]:
    """Dolos' ``WinnowFilter.fingerprints``: (hash, start token index) of each selected
    k-gram, in order (see ``_winnow_loop``)."""
    hashes, indexes = _winnow_array(_kgram_array(_token_values(tokens), k), window)
    return list(zip(hashes.tolist(), indexes.tolist(), strict=True))


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


def fingerprint(text: str, language: str) -> Fingerprints:
    import numpy as np

    values, rows_of = _tokenize_lazy(text, language)
    hashes, starts = _winnow_array(_kgram_array(values, KGRAM_LENGTH), KGRAMS_IN_WINDOW)
    # a k-gram's lines: Region.merge of its first and last tokens' (start row, end row)
    start_rows, end_rows = rows_of(np.concatenate((starts, starts + (KGRAM_LENGTH - 1))))
    count = len(starts)
    firsts = (np.minimum(start_rows[:count], start_rows[count:]) + 1).tolist()
    lasts = (np.maximum(end_rows[:count], end_rows[count:]) + 1).tolist()
    hash_list = hashes.tolist()
    result = Fingerprints(hash_list, list(zip(firsts, lasts, strict=True)), Counter(hash_list))
    result.hash_array, result.line_bounds = hashes, (firsts, lasts)  # the cached properties
    return result


# ---------------------------------------------------------------- pairs


def _similarity(a: Fingerprints, b: Fingerprints) -> float:
    """The similarity with no fingerprint ignored (``similarity``'s)."""
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


def fragments(a: Fingerprints, b: Fingerprints, ignored=None) -> list[Fragment]:
    """Dolos' ``buildFragments``: chains of paired occurrences, contained ones dropped.
    Hashes in ``ignored`` (a sorted numpy array, see ``ignored_array``) pair nothing."""
    import numpy as np

    a_hashes, b_hashes = a.hash_array, b.hash_array
    # Every paired occurrence (i, j), a.hashes[i] == b.hashes[j], in Dolos' order (by i,
    # then j): a's hashes looked up in b's sorted stably, so equal ones keep j's order.
    b_order = np.argsort(b_hashes, kind="stable")
    b_sorted = b_hashes[b_order]
    low = np.searchsorted(b_sorted, a_hashes, "left")
    counts = np.searchsorted(b_sorted, a_hashes, "right") - low
    if ignored is not None and len(ignored):
        counts[_in_sorted(a_hashes, ignored)] = 0
    pairs = int(counts.sum())
    if pairs == 0:
        return []
    i = np.repeat(np.arange(len(a_hashes)), counts)
    j = b_order[np.repeat(low - (np.cumsum(counts) - counts), counts) + np.arange(pairs)]
    # A pair extends the chain through (i - 1, j - 1) if that pair exists, so chains are
    # the runs of consecutive pairs along a diagonal j - i. key orders pairs as Dolos.
    key = i * (len(b_hashes) + 1) + j
    step = len(b_hashes) + 2  # key(i + 1, j + 1) - key(i, j)
    has_previous = key[np.minimum(np.searchsorted(key, key - step), pairs - 1)] == key - step
    has_next = key[np.minimum(np.searchsorted(key, key + step), pairs - 1)] == key + step
    along = np.lexsort((i, j - i))  # pairs by diagonal, then i: each chain a run
    firsts, lasts = along[~has_previous[along]], along[~has_next[along]]
    made = np.argsort(firsts)  # chains in the order Dolos makes them: by their first pair
    firsts, lasts = firsts[made], lasts[made]
    i0, j0, i1, j1 = i[firsts], j[firsts], i[lasts], j[lasts]
    # Pair.squash, as Dolos does it: walk the chains by start and by end of their left
    # k-gram range ([i0, i1]); one that the end pointer passes on its way to the current
    # chain and is contained in it on both sides is dropped (Dolos' linear pass, so not
    # every contained fragment is). Dolos' sorts are stable and chains differ in (i0, j0),
    # so j0 breaks its ties.
    by_start = np.lexsort((j0, i1, i0))
    by_end = np.lexsort((j0, i0, i1))
    end_rank = np.empty_like(by_end)
    end_rank[by_end] = np.arange(len(by_end))
    ranks = end_rank[by_start]
    # A chain is a current one unless the pointer passed it already: iff its end rank
    # beats those of all the chains before it by start.
    current = np.ones(len(ranks), dtype=bool)
    current[1:] = ranks[1:] > np.maximum.accumulate(ranks)[:-1]
    current_ranks = ranks[current]
    current_chains = by_start[current]
    passed = np.ones(len(ranks), dtype=bool)
    passed[current_ranks] = False
    passed_ranks = np.flatnonzero(passed)
    # each passed chain is compared with the first current chain ending after it
    outer = current_chains[np.searchsorted(current_ranks, passed_ranks)]
    inner = by_end[passed_ranks]
    contained = (
        (i0[outer] <= i0[inner])
        & (i1[inner] <= i1[outer])
        & (j0[outer] <= j0[inner])
        & (j1[inner] <= j1[outer])
    )
    dropped = np.zeros(len(ranks), dtype=bool)
    dropped[inner[contained]] = True
    kept = by_start[~dropped[by_start]]
    a_firsts, a_lasts = a.line_bounds
    b_firsts, b_lasts = b.line_bounds
    kept_chains = zip(
        i0[kept].tolist(), j0[kept].tolist(), i1[kept].tolist(), j1[kept].tolist(), strict=True
    )
    return [
        Fragment(
            (min(a_firsts[a_first : a_last + 1]), max(a_lasts[a_first : a_last + 1])),
            (min(b_firsts[b_first : b_last + 1]), max(b_lasts[b_first : b_last + 1])),
            a_last - a_first + 1,
        )
        for a_first, b_first, a_last, b_last in kept_chains
    ]


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
def file_fingerprints(name: str, text: str, language: str | None = None) -> Fingerprints | None:
    """A file's fingerprints (None for a file of no known language), kept for the next
    comparison: a site checks every run of a competition against the same references
    (and other runs), which never change."""
    language = language or language_of(name)
    if language is None:
        return None
    return fingerprint(source_text(name, text), language)


def ignored_array(ignored) -> object:
    """A set of hashes as the sorted numpy array the functions here take (None: none)."""
    import numpy as np

    if ignored is None or not len(ignored):
        return None
    if isinstance(ignored, np.ndarray):
        return np.sort(ignored.astype(np.int64))
    return np.array(sorted(ignored), dtype=np.int64)


def _in_sorted(values, sorted_set):
    """Which of ``values`` (numpy) are in the sorted array ``sorted_set``."""
    import numpy as np

    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[at] == values


def _kept(fp: Fingerprints, ignored) -> tuple[list[int], list[int], int]:
    """A file's distinct hashes and their counts without the ``ignored`` ones, and how
    many distinct hashes were ignored (what Dolos takes off its total)."""
    hashes, counts = list(fp.counts), list(fp.counts.values())
    if ignored is None:
        return hashes, counts, 0
    import numpy as np

    out = _in_sorted(np.array(hashes, dtype=np.int64), ignored).tolist()
    kept = [(h, c) for h, c, drop in zip(hashes, counts, out, strict=True) if not drop]
    return [h for h, _ in kept], [c for _, c in kept], len(hashes) - len(kept)


def name_order(sub_name: str, ref_name: str) -> bool:
    """Whether the submission is Dolos' left file of the pair when Dolos is given every
    file in name order, a submission before a reference of the same name."""
    return sub_name <= ref_name


def _scored_pairs(
    submissions: dict[str, str],
    references: dict[str, str],
    language: str | None,
    ignored=None,
    left: Callable[[str, str], bool] = name_order,
    keep: Callable[[str, str], bool] | None = None,
) -> Iterator[tuple[str, str, float, Fingerprints, Fingerprints, bool]]:
    """Every (submission, reference) pair of one language that ``keep`` keeps, with its
    similarity and whether the submission is Dolos' left file (``left``), the hashes of
    ``ignored`` (``ignored_array``) set aside as Dolos does. The references' distinct
    hashes are indexed once, sorted with their reference and count, so a submission
    costs one sorted look-up of its distinct hashes (numpy) and a sum of the matches per
    reference."""
    import numpy as np

    refs: dict[str, tuple[Fingerprints, str]] = {}
    for name, text in references.items():
        fp = file_fingerprints(name, text, language)
        if fp is not None:
            refs[name] = (fp, language or language_of(name))
    ref_list = list(refs.values())
    kept = [_kept(fp, ignored) for fp, _ in ref_list]
    ref_ignored = [dropped for _, _, dropped in kept]
    index_hashes = np.array([h for hashes, _, _ in kept for h in hashes], dtype=np.int64)
    index_refs = np.repeat(np.arange(len(ref_list)), [len(hashes) for hashes, _, _ in kept])
    index_counts = np.array([c for _, counts, _ in kept for c in counts], dtype=np.int64)
    order = np.argsort(index_hashes)
    index_hashes = index_hashes[order]
    index_refs = index_refs[order]
    index_counts = index_counts[order]
    for sub_name, text in submissions.items():
        sub = file_fingerprints(sub_name, text, language)
        if sub is None:
            continue
        sub_language = language or language_of(sub_name)
        # covered[r]: the sum of count + ref_count over the hashes sub shares with ref r
        sub_hashes, sub_counts, sub_dropped = _kept(sub, ignored)
        values = np.array(sub_hashes, dtype=np.int64)
        counts = np.array(sub_counts, dtype=np.int64)
        low = np.searchsorted(index_hashes, values, "left")
        found = np.searchsorted(index_hashes, values, "right") - low
        matches = int(found.sum())
        at = np.repeat(low - (np.cumsum(found) - found), found) + np.arange(matches)
        covered = np.bincount(
            index_refs[at],
            weights=index_counts[at] + np.repeat(counts, found),
            minlength=len(ref_list),
        )
        covered = covered.astype(np.int64).tolist()  # sums of small integers: exact
        for position, (ref_name, (ref, ref_language)) in enumerate(refs.items()):
            if ref_language != sub_language or (keep is not None and not keep(sub_name, ref_name)):
                continue
            sub_left = left(sub_name, ref_name)
            dropped = sub_dropped + ref_ignored[position]
            if DOLOS_RIGHT_IGNORED_FROM_LEFT:  # the left file's count, taken twice
                dropped = 2 * (sub_dropped if sub_left else ref_ignored[position])
            total = sub.total + ref.total - dropped
            score = covered[position] / total if total > 0 else 0.0
            yield sub_name, ref_name, score, sub, ref, sub_left


def _pair_fragments(sub: Fingerprints, ref: Fingerprints, ignored, sub_left: bool):
    """The pair's fragments as Dolos builds them from its left file (which ones a
    contained fragment is dropped from depends on the side), sub's lines first."""
    if sub_left:
        return fragments(sub, ref, ignored)
    return [Fragment(f.b_lines, f.a_lines, f.kgrams) for f in fragments(ref, sub, ignored)]


def compare_corpus(
    submissions: dict[str, str],
    references: dict[str, str],
    threshold: float = 0.6,
    language: str | None = None,
    ignored=None,
    *,
    left: Callable[[str, str], bool] = name_order,
    keep: Callable[[str, str], bool] | None = None,
) -> list[CorpusMatch]:
    """Every (submission, reference) pair whose similarity is at least ``threshold``,
    highest first, with fragments. ``language`` None: each file's from its extension
    (``.py``, ``.ipynb``, ``.R``); files of other kinds are skipped. Only files of one
    language are paired. Hashes in ``ignored`` (any collection of ints) are set aside as
    Dolos sets aside the fingerprints it ignores; then the figure depends on which file
    Dolos was given first (see the module's doc): ``left(submission, reference)`` says
    whether it was the submission, by default the earlier name (``name_order``), so that
    a pair's figure does not depend on which side each file is given on. ``keep``, when
    given, says which pairs to compare (e.g. each once when the sides share files)."""
    ignored = ignored_array(ignored)
    matches = [
        CorpusMatch(sub_name, ref_name, score, _pair_fragments(sub, ref, ignored, sub_left))
        for sub_name, ref_name, score, sub, ref, sub_left in _scored_pairs(
            submissions, references, language, ignored, left, keep
        )
        if score >= threshold
    ]
    matches.sort(key=lambda m: (-m.similarity, m.submission, m.reference))
    return matches


def best_match(
    submissions: dict[str, str],
    references: dict[str, str],
    language: str | None = None,
    ignored=None,
    *,
    left: Callable[[str, str], bool] = name_order,
) -> CorpusMatch | None:
    """The most similar (submission, reference) pair, however low, with its fragments
    (computed for that pair only); None when no pair of one language exists. Ties go
    to the first names in order. ``ignored`` and ``left`` as in ``compare_corpus``."""
    ignored = ignored_array(ignored)
    best = None
    for sub_name, ref_name, score, sub, ref, sub_left in _scored_pairs(
        submissions, references, language, ignored, left
    ):
        key = (-score, sub_name, ref_name)
        if best is None or key < best[0]:
            best = (key, sub_name, ref_name, score, sub, ref, sub_left)
    if best is None:
        return None
    _, sub_name, ref_name, score, sub, ref, sub_left = best
    return CorpusMatch(sub_name, ref_name, score, _pair_fragments(sub, ref, ignored, sub_left))
