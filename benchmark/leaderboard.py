"""Human private leaderboards: read MLE-bench's ``leaderboard.csv`` and Kaggle's download.

Two formats: MLE-bench's ``leaderboard.csv`` (``scoreNullable,teamId,hasTeamName,
submissionDate,score,hasScore``, in its competitions' folders) and Kaggle's download
(``Rank,TeamId,TeamName,LastSubmissionDate,Score,...``, a CSV or Kaggle's zip).
MLE-bench ranks against the rows in file order, and so does this when the file is in
order; when the order disagrees with the catalogue's direction, ``warnings`` says so and
the rows are sorted stably best-first.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

from benchmark.medals import MedalThresholds, medal_thresholds

LFS_POINTER_PREFIX = b"version https://git-lfs.github.com/spec/"

# Column names per format: score, team id, team name, submission date (the first present
# of the candidates: Kaggle's older downloads call the date column SubmissionDate).
_FORMATS = {
    "mlebench": ("score", ("teamId",), (), ("submissionDate",)),
    "kaggle": ("Score", ("TeamId",), ("TeamName",), ("LastSubmissionDate", "SubmissionDate")),
}


class LeaderboardError(ValueError):
    """A leaderboard file that cannot be used; the message says what to do about it."""


@dataclass(frozen=True)
class LeaderboardTable:
    """A competition's human private leaderboard, best first in the catalogue's direction."""

    scores: tuple[float, ...]  # in leaderboard order; NaN where a row has no score
    team_ids: tuple[str | None, ...]
    team_names: tuple[str | None, ...]
    submission_dates: tuple[str | None, ...]
    source_format: str  # "mlebench" | "kaggle"
    lower_is_better: bool
    warnings: tuple[str, ...] = ()

    @property
    def n_teams(self) -> int:
        """The number of rows, with a score or not: the N of the medal rules as MLE-bench
        counts it (``len(leaderboard)``)."""
        return len(self.scores)

    @property
    def n_unscored(self) -> int:
        """Rows without a score (NaN in ``scores``): counted in N, skipped by the median."""
        return sum(1 for s in self.scores if s != s)

    def thresholds(self) -> MedalThresholds:
        """The gold/silver/bronze/median lines of this leaderboard (MLE-bench's rule)."""
        return medal_thresholds(self.scores, self.lower_is_better)


def is_lfs_pointer(data: bytes) -> bool:
    """True when ``data`` is a Git LFS pointer file rather than the file's content."""
    return data.lstrip(b"\xef\xbb\xbf").startswith(LFS_POINTER_PREFIX)


def lfs_pointer_message(path: Path | str, checkout: Path | str | None = None) -> str:
    """What to tell a person whose file at ``path`` is a Git LFS pointer.

    ``checkout`` is the MLE-bench checkout's root; by default it is recognised from a
    path of the form ``<checkout>/mlebench/competitions/<id>/<file>``.
    """
    parts = Path(path).parts
    if checkout is None and len(parts) >= 4 and parts[-4:-2] == ("mlebench", "competitions"):
        checkout = Path(*parts[:-4]) if len(parts) > 4 else Path(".")
    where = f"in {checkout}" if checkout is not None else "in the MLE-bench checkout"
    return (
        f"{path} is a Git LFS pointer, not the file itself (MLE-bench keeps its leaderboards "
        f"in Git LFS): run `git lfs install && git lfs pull` {where}, then try again."
    )


def read_leaderboard(path: Path, lower_is_better: bool | None = None) -> LeaderboardTable:
    """Read a leaderboard file (MLE-bench CSV, Kaggle CSV, or Kaggle's zip of that CSV).

    ``lower_is_better`` should come from the catalogue; None infers the direction like
    MLE-bench (the first score below the last means lower is better). Raises
    LeaderboardError, with a message a person can act on, for a Git LFS pointer, a
    missing, empty or malformed file, or a file without a score column.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise LeaderboardError(f"{path}: no such leaderboard file") from None
    except OSError as error:
        raise LeaderboardError(f"{path}: cannot read the leaderboard ({error})") from None
    return parse_leaderboard(data, name=str(path), lower_is_better=lower_is_better)


def parse_leaderboard(
    data: bytes, *, name: str = "leaderboard.csv", lower_is_better: bool | None = None
) -> LeaderboardTable:
    """Parse a leaderboard file's bytes (as uploaded); ``name`` is used in messages.

    Same rules and errors as ``read_leaderboard``.
    """
    if is_lfs_pointer(data):
        raise LeaderboardError(lfs_pointer_message(name))
    if data[:4] == b"PK\x03\x04":
        data, name = _csv_from_zip(data, name)
        if is_lfs_pointer(data):
            raise LeaderboardError(lfs_pointer_message(name))
    if not data.strip():
        raise LeaderboardError(f"{name} is empty: expected a leaderboard CSV with a score column")
    frame = _read_csv(data, name)
    source_format = _detect_format(frame.columns, name)
    return _leaderboard_from_frame(frame, source_format, name, lower_is_better)


def find_leaderboard(
    competition_id: str, *, data_dir: Path | None = None, mlebench_dir: Path | None = None
) -> Path | None:
    """Where a competition's leaderboard file is, or None if neither place has one.

    Looks at ``data_dir/<id>/leaderboard.csv`` then at an MLE-bench checkout's
    ``mlebench_dir/mlebench/competitions/<id>/leaderboard.csv``. A Git LFS pointer
    counts as found: reading it raises the LeaderboardError that explains the fix.
    """
    candidates = []
    if data_dir is not None:
        candidates.append(Path(data_dir) / competition_id / "leaderboard.csv")
    if mlebench_dir is not None:
        candidates.append(
            Path(mlebench_dir) / "mlebench" / "competitions" / competition_id / "leaderboard.csv"
        )
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def _csv_from_zip(data: bytes, name: str) -> tuple[bytes, str]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise LeaderboardError(f"{name} looks like a zip file but cannot be opened") from None
    with archive:
        members = [
            info
            for info in archive.infolist()
            if not info.is_dir() and info.filename.lower().endswith(".csv")
        ]
        if len(members) != 1:
            found = ", ".join(info.filename for info in members) or "none"
            raise LeaderboardError(
                f"{name}: expected exactly one CSV in the zip (Kaggle's leaderboard "
                f"download), found {found}"
            )
        return archive.read(members[0]), f"{name}:{members[0].filename}"


def _read_csv(data: bytes, name: str):
    # pandas' own float parser, as MLE-bench reads leaderboard.csv with pd.read_csv:
    # thresholds must be bit-identical to the floats MLE-bench compares against.
    import pandas as pd

    try:
        return pd.read_csv(io.BytesIO(data), dtype={"teamId": str, "TeamId": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise LeaderboardError(f"{name} is not a readable CSV: {reason}") from None


def _detect_format(columns, name: str) -> str:
    present = set(columns)
    if "score" in present:
        return "mlebench"
    if "Score" in present:
        return "kaggle"
    shown = ", ".join(str(c) for c in columns)
    raise LeaderboardError(
        f"{name} has no score column (columns: {shown}); expected MLE-bench's leaderboard.csv "
        "(`score`) or Kaggle's leaderboard download (`Score`)"
    )


def _column(frame, candidates: tuple[str, ...]) -> tuple[str | None, ...]:
    column = next((c for c in candidates if c in frame.columns), None)
    if column is None:
        return (None,) * len(frame)
    return tuple(None if _missing(v) else str(v) for v in frame[column].tolist())


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _leaderboard_from_frame(
    frame, source_format: str, name: str, lower_is_better: bool | None
) -> LeaderboardTable:
    import numpy as np
    import pandas as pd

    score_col, team_col, name_col, date_col = _FORMATS[source_format]
    warnings: list[str] = []
    raw = frame[score_col]
    scores = pd.to_numeric(raw, errors="coerce")
    not_numbers = scores.isna() & raw.notna() & (raw.astype(str).str.strip() != "")
    if not_numbers.any():
        examples = ", ".join(repr(v) for v in raw[not_numbers].astype(str).unique()[:3])
        raise LeaderboardError(
            f"{name}: {int(not_numbers.sum())} rows have a score that is not a number "
            f"(e.g. {examples})"
        )
    values = scores.to_numpy(dtype=float)
    present = ~np.isnan(values)
    if not present.any():
        raise LeaderboardError(f"{name} has no team with a score")
    unscored = int((~present).sum())
    if unscored:
        warnings.append(
            f"MLE-bench quirk: {unscored} of {len(frame)} rows have no score. They are kept "
            f"among the teams as MLE-bench counts them (N = {len(frame)}, medal positions "
            f"from int(N × p)); the median is taken over the {len(frame) - unscored} scores "
            f"only, as pandas does."
        )
    if np.isinf(values).any():
        warnings.append(f"{int(np.isinf(values).sum())} scores are infinite; kept as they are")

    scored = values[present]
    inferred = bool(values[0] < values[-1])  # MLE-bench's is_lower_better (NaN -> False)
    direction = inferred if lower_is_better is None else bool(lower_is_better)
    order = _best_first_order(scored, direction, warnings, lower_is_better is None)
    if order is not None:
        # Scored rows best first, then the rows without a score (pandas' na_position).
        order = np.concatenate([np.flatnonzero(present)[order], np.flatnonzero(~present)])
        values = values[order]
        frame = frame.iloc[order]
    return LeaderboardTable(
        scores=tuple(float(v) for v in values),
        team_ids=_column(frame, team_col),
        team_names=_column(frame, name_col),
        submission_dates=_column(frame, date_col),
        source_format=source_format,
        lower_is_better=direction,
        warnings=tuple(warnings),
    )


def _best_first_order(values, lower_is_better: bool, warnings: list[str], inferred: bool):
    """None when ``values`` are already best first; else the stable best-first order."""
    import numpy as np

    steps = np.diff(values)
    in_order = bool(np.all(steps >= 0) if lower_is_better else np.all(steps <= 0))
    if in_order:
        return None
    direction = "lower" if lower_is_better else "higher"
    source = "inferred from its first and last score" if inferred else "from the catalogue"
    first, last = values[0], values[-1]
    worst_first = first > last if lower_is_better else first < last
    if worst_first:
        warnings.append(
            f"the file lists scores worst first (first {first:g}, last {last:g}) but "
            f"{direction} is better ({source}); sorted best first"
        )
    else:
        out_of_order = int(np.count_nonzero(steps < 0 if lower_is_better else steps > 0))
        warnings.append(
            f"the file's scores are not in {direction}-is-better order ({source}): "
            f"{out_of_order} rows follow a worse score; sorted best first"
        )
    # Stable sort keeps the file's order among equal scores.
    keys = values if lower_is_better else -values
    return np.argsort(keys, kind="stable")
