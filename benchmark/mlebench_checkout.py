"""Read an MLE-bench checkout: per competition what can be imported, and why not the rest.

An MLE-bench repository keeps, per competition, ``mlebench/competitions/<id>/`` with
``config.yaml``, ``description.md``, ``description_obfuscated.md`` and
``leaderboard.csv`` (the last in Git LFS: on a fresh clone it is a pointer file), and
its split lists in ``experiments/splits/*.txt``. This module only reads: it returns what
it found per competition with a status and messages a person can act on, and leaves
persisting it (atomically, per competition) to the caller.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.catalogue import CompetitionFacts, load_catalogue
from benchmark.leaderboard import (
    LeaderboardError,
    LeaderboardTable,
    is_lfs_pointer,
    lfs_pointer_message,
    parse_leaderboard,
)
from benchmark.medals import MedalThresholds
from benchmark.splits import MLEBENCH_SPLIT_FILES

CONFIG = "config.yaml"
DESCRIPTION = "description.md"
DESCRIPTION_OBFUSCATED = "description_obfuscated.md"
LEADERBOARD = "leaderboard.csv"
PART_FILES = (CONFIG, DESCRIPTION, DESCRIPTION_OBFUSCATED, LEADERBOARD)


# Part and competition statuses.
READ, MISSING, REFUSED = "read", "missing", "refused"
IMPORTED, PARTIAL, SKIPPED = "imported", "partial", "skipped"


class CheckoutError(ValueError):
    """The path given is not an MLE-bench checkout."""


@dataclass(frozen=True)
class PartOutcome:
    """What happened to one file of a competition folder."""

    file: str  # one of PART_FILES
    status: str  # "read" | "missing" | "refused"
    message: str | None = None  # why, when not read


@dataclass(frozen=True)
class CompetitionImport:
    """Everything read from one competition folder, and what could not be read.

    ``status``: "imported" (every file read), "partial" (some read, the rest missing or
    refused: see ``messages``), "refused" (nothing importable: unknown to the
    catalogue, or no file readable) or "skipped" (a folder that is not a competition).
    """

    competition_id: str
    status: str
    messages: tuple[str, ...]
    parts: tuple[PartOutcome, ...] = ()
    facts: CompetitionFacts | None = None
    config: dict | None = None  # config.yaml as parsed
    description: str | None = None
    description_obfuscated: str | None = None
    leaderboard: LeaderboardTable | None = None
    thresholds: MedalThresholds | None = None  # of ``leaderboard``, when read
    splits: tuple[str, ...] = ()  # MLE-bench split files (stems) listing this competition

    def part(self, file: str) -> PartOutcome | None:
        """The outcome for one of PART_FILES, or None when the folder was not read."""
        return next((p for p in self.parts if p.file == file), None)

    def summary(self) -> str:
        """One line for a person: the id, the status, what was read, and the messages."""
        read = [p.file for p in self.parts if p.status == READ]
        text = f"{self.competition_id}: {self.status}"
        if read and self.status != IMPORTED:
            text += f" ({', '.join(read)} read)"
        if self.messages:
            text += " - " + " ".join(self.messages)
        return text


@dataclass(frozen=True)
class CheckoutImport:
    """The result of reading a whole checkout."""

    root: Path
    competitions: tuple[CompetitionImport, ...]  # one per folder read, sorted by id
    split_lists: dict[str, tuple[str, ...]] = field(default_factory=dict)  # stem -> ids
    messages: tuple[str, ...] = ()  # checkout-level: split lists vs the catalogue, etc.
    missing_competitions: tuple[str, ...] = ()  # catalogued ids with no folder here

    def get(self, competition_id: str) -> CompetitionImport | None:
        """The outcome of one competition, or None if the checkout has no such folder."""
        return next((c for c in self.competitions if c.competition_id == competition_id), None)

    def by_status(self) -> dict[str, list[str]]:
        """Competition ids grouped by status (keys: imported, partial, refused, skipped)."""
        groups: dict[str, list[str]] = {IMPORTED: [], PARTIAL: [], REFUSED: [], SKIPPED: []}
        for outcome in self.competitions:
            groups[outcome.status].append(outcome.competition_id)
        return groups


def read_mlebench_checkout(
    path: Path,
    *,
    competition_ids: Iterable[str] | None = None,
    catalogue: dict[str, CompetitionFacts] | None = None,
) -> CheckoutImport:
    """Read every competition folder (or only ``competition_ids``) and the split lists.

    Directions and facts come from ``catalogue`` (default: mleboard's catalogue).
    Raises CheckoutError when ``path`` has no ``mlebench/competitions`` folder; every
    other problem is reported in the returned outcomes, never raised.
    """
    root = Path(path)
    competitions_dir = root / "mlebench" / "competitions"
    if not competitions_dir.is_dir():
        raise CheckoutError(
            f"{root} is not an MLE-bench checkout: it has no mlebench/competitions folder"
        )
    catalogue = load_catalogue() if catalogue is None else catalogue
    split_lists, messages = read_split_lists(root, catalogue)
    wanted = None if competition_ids is None else set(competition_ids)

    outcomes = []
    found = set()
    for folder in sorted(p for p in competitions_dir.iterdir() if p.is_dir()):
        found.add(folder.name)
        if wanted is not None and folder.name not in wanted:
            continue
        splits = tuple(stem for stem, ids in split_lists.items() if folder.name in ids)
        outcomes.append(read_competition_folder(folder, catalogue.get(folder.name), splits))

    expected = {cid for cid, facts in catalogue.items() if not facts.is_demo}
    if wanted is not None:
        expected &= wanted
        for cid in sorted(wanted - found):
            outcomes.append(
                CompetitionImport(cid, REFUSED, (f"{cid}: the checkout has no folder for it",))
            )
    return CheckoutImport(
        root=root,
        competitions=tuple(sorted(outcomes, key=lambda o: o.competition_id)),
        split_lists=split_lists,
        messages=tuple(messages),
        missing_competitions=tuple(sorted(expected - found)),
    )


def read_competition_folder(
    folder: Path, facts: CompetitionFacts | None, splits: tuple[str, ...] = ()
) -> CompetitionImport:
    """Read one ``mlebench/competitions/<id>/`` folder against its catalogue ``facts``."""
    competition_id = folder.name
    if not any((folder / name).exists() for name in PART_FILES):
        return CompetitionImport(
            competition_id,
            SKIPPED,
            (f"{folder.name} has none of {', '.join(PART_FILES)}: not a competition folder",),
            splits=splits,
        )
    if facts is None:
        return CompetitionImport(
            competition_id,
            REFUSED,
            (
                f"{competition_id} is not in mleboard's catalogue (no metric or direction "
                "known), so nothing of it was imported",
            ),
            splits=splits,
        )

    parts: list[PartOutcome] = []
    messages: list[str] = []
    config = _read_config(folder, facts, parts, messages)
    description = _read_text(folder / DESCRIPTION, parts)
    description_obfuscated = _read_text(folder / DESCRIPTION_OBFUSCATED, parts)
    leaderboard = _read_leaderboard_part(folder / LEADERBOARD, facts, parts, messages)

    messages[:0] = [p.message for p in parts if p.status != READ and p.message]
    n_read = sum(p.status == READ for p in parts)
    status = IMPORTED if n_read == len(parts) else PARTIAL if n_read else REFUSED
    return CompetitionImport(
        competition_id=competition_id,
        status=status,
        messages=tuple(messages),
        parts=tuple(parts),
        facts=facts,
        config=config,
        description=description,
        description_obfuscated=description_obfuscated,
        leaderboard=leaderboard,
        thresholds=leaderboard.thresholds() if leaderboard is not None else None,
        splits=splits,
    )


def read_split_lists(
    root: Path, catalogue: dict[str, CompetitionFacts]
) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """MLE-bench's split lists (file stem -> ids) and messages where they differ from ours."""
    splits_dir = Path(root) / "experiments" / "splits"
    if not splits_dir.is_dir():
        return {}, ["the checkout has no experiments/splits folder: no split lists read"]
    lists: dict[str, tuple[str, ...]] = {}
    messages: list[str] = []
    for split_file in sorted(splits_dir.glob("*.txt")):
        text = split_file.read_text(encoding="utf-8", errors="replace")
        lines = (line.strip() for line in text.splitlines())
        lists[split_file.stem] = tuple(line for line in lines if line and not line.startswith("#"))
    for stem, ours in MLEBENCH_SPLIT_FILES.items():
        if stem not in lists:
            messages.append(f"experiments/splits/{stem}.txt is missing")
            continue
        theirs = set(lists[stem])
        catalogued = {cid for cid, facts in catalogue.items() if ours in facts.splits}
        if theirs - catalogued:
            extra = ", ".join(sorted(theirs - catalogued))
            messages.append(f"experiments/splits/{stem}.txt lists {extra}, not in our {ours} split")
        if catalogued - theirs:
            absent = ", ".join(sorted(catalogued - theirs))
            messages.append(f"experiments/splits/{stem}.txt does not list {absent} (our {ours})")
    return lists, messages


def _refuse_if_pointer(path: Path, data: bytes, parts: list[PartOutcome]) -> bool:
    if is_lfs_pointer(data):
        parts.append(PartOutcome(path.name, REFUSED, lfs_pointer_message(path)))
        return True
    return False


def _read_bytes(path: Path, parts: list[PartOutcome]) -> bytes | None:
    if not path.is_file():
        parts.append(PartOutcome(path.name, MISSING, f"{path} is missing"))
        return None
    try:
        data = path.read_bytes()
    except OSError as error:
        parts.append(PartOutcome(path.name, REFUSED, f"{path} cannot be read: {error}"))
        return None
    return None if _refuse_if_pointer(path, data, parts) else data


def _read_text(path: Path, parts: list[PartOutcome]) -> str | None:
    data = _read_bytes(path, parts)
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        parts.append(PartOutcome(path.name, REFUSED, f"{path} is not UTF-8 text"))
        return None
    parts.append(PartOutcome(path.name, READ))
    return text


def _read_config(
    folder: Path, facts: CompetitionFacts, parts: list[PartOutcome], messages: list[str]
) -> dict | None:
    import yaml

    path = folder / CONFIG
    data = _read_bytes(path, parts)
    if data is None:
        return None
    try:
        config = yaml.safe_load(data)
    except yaml.YAMLError as error:
        reason = str(error).splitlines()[0]
        parts.append(PartOutcome(CONFIG, REFUSED, f"{path} is not valid YAML: {reason}"))
        return None
    if not isinstance(config, dict):
        parts.append(PartOutcome(CONFIG, REFUSED, f"{path} is not a YAML mapping"))
        return None
    if config.get("id") != folder.name:
        parts.append(
            PartOutcome(
                CONFIG,
                REFUSED,
                f"{path} names competition {config.get('id')!r}, not {folder.name!r}",
            )
        )
        return None
    parts.append(PartOutcome(CONFIG, READ))
    messages.extend(_config_differences(config, facts))
    return config


def _config_differences(config: dict, facts: CompetitionFacts) -> list[str]:
    """Where config.yaml disagrees with our catalogue (the catalogue's value is kept)."""
    dataset = config.get("dataset") or {}
    pairs = [
        ("name", config.get("name"), facts.name),
        ("awards_medals", config.get("awards_medals"), facts.awards_medals),
        ("competition_type", config.get("competition_type"), facts.competition_type),
        ("dataset.answers", dataset.get("answers"), facts.answers),
        ("dataset.sample_submission", dataset.get("sample_submission"), facts.sample_submission),
    ]
    return [
        f"config.yaml says {key} = {theirs!r}, the catalogue says {ours!r}; kept the catalogue's"
        for key, theirs, ours in pairs
        if theirs != ours
    ]


def _read_leaderboard_part(
    path: Path, facts: CompetitionFacts, parts: list[PartOutcome], messages: list[str]
) -> LeaderboardTable | None:
    if not path.is_file():
        parts.append(PartOutcome(LEADERBOARD, MISSING, f"{path} is missing"))
        return None
    data = _read_bytes(path, parts)
    if data is None:  # an LFS pointer, or unreadable: already recorded in parts
        return None
    try:
        leaderboard = parse_leaderboard(data, name=str(path), lower_is_better=facts.lower_is_better)
    except LeaderboardError as error:
        parts.append(PartOutcome(LEADERBOARD, REFUSED, str(error)))
        return None
    parts.append(PartOutcome(LEADERBOARD, READ))
    messages.extend(f"{LEADERBOARD}: {warning}" for warning in leaderboard.warnings)
    return leaderboard
