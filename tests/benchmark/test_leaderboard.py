from __future__ import annotations

import io
import math
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmark.leaderboard import (
    LeaderboardError,
    find_leaderboard,
    parse_leaderboard,
    read_leaderboard,
)
from benchmark.medals import rank_score

MLEBENCH_HEADER = "scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore"
KAGGLE_HEADER = "Rank,TeamId,TeamName,LastSubmissionDate,Score,SubmissionCount,TeamMemberUserNames"


def mlebench_csv(scores, dates=None) -> str:
    lines = [MLEBENCH_HEADER]
    for i, score in enumerate(scores):
        date = dates[i] if dates else f"2023-01-{1 + i % 28:02d} 10:00:00"
        text = "" if score is None else repr(score)
        has = "False" if score is None else "True"
        lines.append(f"{text},{1000 + i},True,{date},{text},{has}")
    return "\n".join(lines) + "\n"


def kaggle_csv(scores) -> str:
    lines = [KAGGLE_HEADER]
    for i, score in enumerate(scores):
        lines.append(f'{i + 1},{500 + i},"Team, {i}",2023-02-01 00:00:00,{score},3,"a b"')
    return "\n".join(lines) + "\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_mlebench_format_in_order(tmp_path):
    path = write(tmp_path, "leaderboard.csv", mlebench_csv([0.91, 0.9, 0.9, 0.85]))
    board = read_leaderboard(path, lower_is_better=False)
    assert board.scores == (0.91, 0.9, 0.9, 0.85)
    assert board.team_ids == ("1000", "1001", "1002", "1003")
    assert board.team_names == (None,) * 4
    assert board.submission_dates[0] == "2023-01-01 10:00:00"
    assert board.source_format == "mlebench"
    assert board.warnings == ()
    assert board.n_teams == 4
    assert board.thresholds().gold == 0.91


def test_kaggle_csv_and_zip(tmp_path):
    text = kaggle_csv([12.5, 13.0, 13.0, 20.25])
    csv_board = read_leaderboard(write(tmp_path, "lb.csv", text), lower_is_better=True)
    assert csv_board.source_format == "kaggle"
    assert csv_board.scores == (12.5, 13.0, 13.0, 20.25)
    assert csv_board.team_names[0] == "Team, 0"
    assert csv_board.team_ids[0] == "500"
    assert csv_board.submission_dates[0] == "2023-02-01 00:00:00"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("some-competition-publicleaderboard.csv", text)
    zipped = tmp_path / "some-competition-publicleaderboard.zip"
    zipped.write_bytes(buffer.getvalue())
    zip_board = read_leaderboard(zipped, lower_is_better=True)
    assert zip_board == csv_board


def test_older_kaggle_download_columns():
    text = "TeamId,TeamName,SubmissionDate,Score\n7,Ada,2019-03-01 10:00:00,0.5\n"
    board = parse_leaderboard(text.encode(), lower_is_better=False)
    assert board.source_format == "kaggle"
    assert board.submission_dates == ("2019-03-01 10:00:00",)
    assert board.team_names == ("Ada",)


def test_zip_without_exactly_one_csv(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.csv", kaggle_csv([1.0]))
        archive.writestr("b.csv", kaggle_csv([1.0]))
    with pytest.raises(LeaderboardError, match="exactly one CSV"):
        parse_leaderboard(buffer.getvalue(), name="two.zip")


def test_lfs_pointer_says_git_lfs_pull(tmp_path, mlebench_checkout):
    real_pointer = mlebench_checkout / "mlebench/competitions/spaceship-titanic/leaderboard.csv"
    with pytest.raises(LeaderboardError, match="git lfs pull") as caught:
        read_leaderboard(real_pointer, lower_is_better=False)
    assert str(mlebench_checkout) in str(caught.value)  # where to run it
    pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n"
    with pytest.raises(LeaderboardError, match="Git LFS pointer"):
        read_leaderboard(write(tmp_path, "leaderboard.csv", pointer))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("\n  \n", "is empty"),
        (MLEBENCH_HEADER + "\n", "no team with a score"),
        ("team,points\na,1\n", "no score column"),
        ('score,teamId\n"0.5,1\n0.4,2\n', "not a readable CSV"),
        ("score,teamId\n0.5,1\nabc,2\n", "not a number"),
    ],
)
def test_unusable_files_raise_clear_errors(tmp_path, text, message):
    with pytest.raises(LeaderboardError, match=message):
        read_leaderboard(write(tmp_path, "leaderboard.csv", text), lower_is_better=False)


def test_missing_file(tmp_path):
    with pytest.raises(LeaderboardError, match="no such leaderboard file"):
        read_leaderboard(tmp_path / "absent.csv")


def test_rows_without_score_count_in_n_and_the_median_skips_them(tmp_path):
    path = write(tmp_path, "leaderboard.csv", mlebench_csv([0.9, None, 0.8, None, 0.7]))
    board = read_leaderboard(path, lower_is_better=False)
    assert board.n_teams == 5 and board.n_unscored == 2  # N as MLE-bench counts it
    assert board.scores[0] == 0.9 and math.isnan(board.scores[1]) and board.scores[2] == 0.8
    assert board.team_ids == ("1000", "1001", "1002", "1003", "1004")
    assert board.thresholds().median == 0.8  # pandas' median over the three scores
    assert len(board.warnings) == 1
    assert "2 of 5 rows have no score" in board.warnings[0] and "N = 5" in board.warnings[0]


def _mlebench_rank_restated(file_scores: list, score: float, lower_is_better: bool) -> dict:
    """MLE-bench's Grader.rank_score on the file's rows as they are (pandas Series, NaN
    kept): thresholds at iloc[position - 1] with positions from int(N * p), median from
    Series.median()."""
    import pandas as pd

    scores = pd.Series(file_scores, dtype=float)
    n = len(scores)
    if n < 100:
        gold, silver, bronze = (max(1, int(n * p)) for p in (0.1, 0.2, 0.4))
    elif n < 250:
        gold, silver, bronze = 10, int(n * 0.2), int(n * 0.4)
    elif n < 1000:
        gold, silver, bronze = 10 + int(n * 0.002), 50, 100
    else:
        gold, silver, bronze = 10 + int(n * 0.002), int(n * 0.05), int(n * 0.1)
    g, s_, b = (scores.iloc[p - 1] for p in (gold, silver, bronze))
    better = (lambda x, t: x <= t) if lower_is_better else (lambda x, t: x >= t)
    gm = bool(better(score, g))
    sm = not gm and bool(better(score, s_))
    bm = not gm and not sm and bool(better(score, b))
    return {"gold_medal": gm, "silver_medal": sm, "bronze_medal": bm, "median": scores.median()}


@pytest.mark.parametrize("seed", range(40))
def test_unscored_rows_give_mlebench_medals(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([7, 30, 120, 400, 1500]))
    lower = bool(rng.integers(2))
    values = np.sort(rng.normal(size=n))
    values = values if lower else values[::-1]
    file_scores = [float(v) for v in values]
    for i in rng.choice(n, size=max(1, n // 7), replace=False):
        if 0 < i < n - 1:  # the first and last rows keep a score (the direction's witnesses)
            file_scores[i] = None
    path = write(tmp_path, "leaderboard.csv", mlebench_csv(file_scores))
    board = read_leaderboard(path, lower_is_better=lower)
    thresholds = board.thresholds()
    as_read = pd.read_csv(path)["score"].tolist()  # the file as MLE-bench reads it
    for score in rng.choice([v for v in as_read if v == v], size=10):
        ours = rank_score(float(score), thresholds)
        theirs = _mlebench_rank_restated(as_read, float(score), lower)
        assert {k: ours[k] for k in ("gold_medal", "silver_medal", "bronze_medal")} == {
            k: theirs[k] for k in ("gold_medal", "silver_medal", "bronze_medal")
        }
        assert thresholds.median == pytest.approx(theirs["median"])


def test_reversed_file_is_sorted_with_a_warning(tmp_path):
    path = write(tmp_path, "leaderboard.csv", mlebench_csv([0.1, 0.2, 0.2, 0.3]))
    board = read_leaderboard(path, lower_is_better=False)
    assert board.scores == (0.3, 0.2, 0.2, 0.1)
    assert board.team_ids == ("1003", "1001", "1002", "1000")  # stable among ties
    assert "worst first" in board.warnings[0] and "higher is better" in board.warnings[0]


def test_unsorted_file_is_sorted_stably_with_a_warning(tmp_path):
    path = write(tmp_path, "leaderboard.csv", mlebench_csv([0.9, 0.5, 0.7, 0.5, 0.1]))
    board = read_leaderboard(path, lower_is_better=False)
    assert board.scores == (0.9, 0.7, 0.5, 0.5, 0.1)
    assert board.team_ids == ("1000", "1002", "1001", "1003", "1004")
    assert "not in higher-is-better order" in board.warnings[0]
    assert "1 rows follow a worse score" in board.warnings[0]


def test_direction_inferred_like_mlebench_when_not_given(tmp_path):
    ascending = read_leaderboard(write(tmp_path, "a.csv", mlebench_csv([1.0, 2.0, 3.0])))
    assert ascending.lower_is_better is True and ascending.warnings == ()
    flat = read_leaderboard(write(tmp_path, "b.csv", mlebench_csv([2.0, 2.0])))
    assert flat.lower_is_better is False  # first == last: MLE-bench says higher is better


def mlebench_reference(path: Path, score: float) -> dict:
    """MLE-bench's grade path restated: read_csv, infer direction, positions, median."""
    board = pd.read_csv(path)
    column = board["score"]
    lower = bool(column.iloc[0] < column.iloc[-1])
    n = len(board)
    if n < 100:
        positions = (max(1, int(n * 0.1)), max(1, int(n * 0.2)), max(1, int(n * 0.4)))
    elif n < 250:
        positions = (10, max(1, int(n * 0.2)), max(1, int(n * 0.4)))
    elif n < 1000:
        positions = (10 + int(n * 0.002), 50, 100)
    else:
        positions = (10 + int(n * 0.002), max(1, int(n * 0.05)), max(1, int(n * 0.1)))
    gold, silver, bronze = (float(column.iloc[p - 1]) for p in positions)
    median = float(column.median())

    def reaches(t):
        return score <= t if lower else score >= t

    g = reaches(gold)
    s = not g and reaches(silver)
    b = not g and not s and reaches(bronze)
    return {
        "gold_medal": g,
        "silver_medal": s,
        "bronze_medal": b,
        "any_medal": g or s or b,
        "above_median": score < median if lower else score > median,
        "gold_threshold": gold,
        "silver_threshold": silver,
        "bronze_threshold": bronze,
        "median_threshold": median,
    }


@pytest.mark.parametrize("lower_is_better", [False, True])
def test_sorted_files_rank_exactly_like_mlebench(tmp_path, lower_is_better):
    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 9, 10, 11, 99, 100, 101, 249, 250, 251, 999, 1000, 1001, 1999, 2000):
        # Many digits and ties: exercises pandas' float parsing and tied thresholds.
        raw = np.round(rng.normal(0.5, 0.2, size=n), 3 if n % 2 else 9)
        scores = np.sort(raw) if lower_is_better else np.sort(raw)[::-1]
        path = write(tmp_path, f"lb{n}.csv", mlebench_csv([float(s) for s in scores]))
        board = read_leaderboard(path)  # direction inferred, as MLE-bench does
        if n > 1 and scores[0] != scores[-1]:
            assert board.lower_is_better is lower_is_better
        assert board.warnings == ()
        thresholds = board.thresholds()
        picks = [thresholds.gold, thresholds.silver, thresholds.bronze, thresholds.median]
        picks += [float(s) for s in rng.choice(scores, size=5)] + [0.5, -1.0, 2.0]
        for score in picks:
            assert rank_score(score, thresholds) == mlebench_reference(path, score), (n, score)


def test_find_leaderboard(tmp_path):
    data_dir = tmp_path / "data"
    checkout = tmp_path / "mle-bench"
    in_checkout = checkout / "mlebench/competitions/x/leaderboard.csv"
    in_checkout.parent.mkdir(parents=True)
    in_checkout.write_text(mlebench_csv([1.0]))
    assert find_leaderboard("x", data_dir=data_dir, mlebench_dir=checkout) == in_checkout
    in_data = data_dir / "x" / "leaderboard.csv"
    in_data.parent.mkdir(parents=True)
    in_data.write_text(mlebench_csv([1.0]))
    assert find_leaderboard("x", data_dir=data_dir, mlebench_dir=checkout) == in_data
    assert find_leaderboard("y", data_dir=data_dir, mlebench_dir=checkout) is None
    assert find_leaderboard("x") is None
