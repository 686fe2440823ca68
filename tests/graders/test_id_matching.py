"""The fast id-pairing paths agree with the exact hash-join path on every shape of id."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from graders.arrow_numpy import from_numpy, to_numpy
from graders.id_matching import fast_order
from graders.results import InvalidSubmission
from graders.validation import align_ids
from tests.support.synthetic import REPO_ROOT

RNG = np.random.default_rng(11)


def _exact_order(sub: pa.Array, ans: pa.Array) -> np.ndarray:
    positions = to_numpy(pc.index_in(sub, value_set=ans)).astype(np.int64)
    order = np.empty(len(ans), dtype=np.int64)
    order[positions] = np.arange(len(sub))
    return order


def _chunked(values: list, pieces: int = 3) -> pa.ChunkedArray:
    size = -(-len(values) // pieces)
    return pa.chunked_array(
        [pa.array(values[i : i + size], pa.string()) for i in range(0, len(values), size)]
    )


@pytest.mark.parametrize(
    "make_id",
    [
        lambda i: f"{i * 2654435761 % 2**32:032x}.jpg",  # fixed width, 36 bytes
        lambda i: f"ID{i:06d}",  # fixed width, exactly 8 bytes
        lambda i: f"{i:09d}x",  # fixed width, 10 bytes (overlapping last word)
        lambda i: str(10_000_000 + i * 7),  # integers, sparse
        lambda i: str(i),  # integers, dense, varying width
        lambda i: f"row-{i}",  # varying width text: exact path
    ],
)
def test_fast_and_exact_pairing_agree(make_id):
    ids = [make_id(i) for i in range(5000)]
    answers = _chunked(ids)
    shuffled = [ids[i] for i in RNG.permutation(len(ids))]
    submission = _chunked(shuffled, pieces=4)
    order = align_ids(submission, answers, "id")
    expected = _exact_order(pa.array(shuffled, pa.string()), pa.array(ids, pa.string()))
    assert np.array_equal(order, expected)
    assert np.array_equal(align_ids(answers, answers, "id"), np.arange(len(ids)))


@pytest.mark.parametrize("make_id", [lambda i: f"{i:032x}", lambda i: str(i * 3)])
def test_mismatches_fall_back_and_are_explained(make_id):
    ids = [make_id(i) for i in range(1000)]
    answers = pa.chunked_array([pa.array(ids)])
    broken = list(ids)
    broken[10] = broken[11]  # one repeated, one missing
    with pytest.raises(InvalidSubmission, match="appears more than once"):
        align_ids(pa.chunked_array([pa.array(broken)]), answers, "id")
    broken = list(ids)
    broken[5] = make_id(5000)
    with pytest.raises(InvalidSubmission, match="not in the test set"):
        align_ids(pa.chunked_array([pa.array(broken)]), answers, "id")


def test_repeated_answer_ids_are_left_to_the_exact_path():
    answers = pa.chunked_array([pa.array(["aaaaaaaa", "aaaaaaaa", "bbbbbbbb"])])
    # the very same sequence pairs row by row (MLE-bench's sorted sequences are equal) ...
    assert list(fast_order(answers, answers)) == [0, 1, 2]
    # ... any other order is left to the exact path
    shuffled = pa.chunked_array([pa.array(["bbbbbbbb", "aaaaaaaa", "aaaaaaaa"])])
    assert fast_order(shuffled, answers) is None


def test_integer_ids_match_text_with_leading_zeros():
    order = align_ids(
        pa.chunked_array([pa.array(["7", "12"])]),
        pa.chunked_array([pa.array(["012", "007"])]),
        "id",
    )
    assert list(order) == [1, 0]


def test_arrow_numpy_round_trip():
    values = RNG.normal(size=100)
    assert np.array_equal(to_numpy(from_numpy(values)), values)
    flags = RNG.random(77) < 0.5
    assert np.array_equal(to_numpy(from_numpy(flags)), flags)
    with_nulls = pa.chunked_array([pa.array([1, None, 3]), pa.array([None, 5])])
    assert np.array_equal(to_numpy(with_nulls), [1, np.nan, 3, np.nan, 5], equal_nan=True)
    sliced = pa.array([True, False, None, True]).slice(1)
    assert np.array_equal(to_numpy(sliced), [0.0, np.nan, 1.0], equal_nan=True)


def test_column_grading_never_imports_pandas(tmp_path):
    """pandas costs a third of a second at start-up: the column graders keep it out."""
    data = tmp_path / "aerial-cactus-identification" / "prepared" / "private"
    data.mkdir(parents=True)
    ids = [f"{i:032x}.jpg" for i in range(50)]
    (data / "test.csv").write_text(
        "id,has_cactus\n" + "".join(f"{i},{n % 2}\n" for n, i in enumerate(ids))
    )
    submission = tmp_path / "sub.csv"
    submission.write_text(
        "id,has_cactus\n" + "".join(f"{i},0.{n % 9}\n" for n, i in enumerate(ids[::-1]))
    )
    code = (
        "import sys; from pathlib import Path; import graders; "
        f"r = graders.grade_submission(Path({str(submission)!r}), 'aerial-cactus-identification', "
        f"Path({str(tmp_path)!r})); "
        "assert r.valid_submission, r.error; print('pandas' in sys.modules, 'sklearn' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
