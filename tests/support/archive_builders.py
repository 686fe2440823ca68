"""Builders of valid and malicious uploads for tests (also used by the webapp's tests).

Each function returns the archive's bytes, or writes a file and returns its path. Names
ending in "/" are folders. Nothing here touches anything outside the paths it is given.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path

SUBMISSION_CSV = b"id,prediction\n0,0.5\n1,0.5\n"


# --- plain archives ------------------------------------------------------------------------


def zip_bytes(files: Mapping[str, bytes]) -> bytes:
    """A deflate zip holding ``files`` (name -> content; a name ending in "/" is a folder).
    Deterministic: the same files give the same bytes (entries are dated 1980-01-01, not
    now), so a test sending one archive twice sends one checksum."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            if name.endswith("/"):
                info.external_attr = 0o40755 << 16 | 0x10
            else:
                info.external_attr = 0o644 << 16
            archive.writestr(info, b"" if name.endswith("/") else data)
    return buffer.getvalue()


def compress(data: bytes, compression: str) -> bytes:
    """``data`` compressed with "" (none), "gz", "bz2" or "xz"."""
    if compression == "":
        return data
    if compression == "gz":
        return gzip.compress(data, mtime=0)  # the same bytes on every call
    return {"bz2": bz2.compress, "xz": lzma.compress}[compression](data)


def tar_bytes(files: Mapping[str, bytes], compression: str = "") -> bytes:
    """A tar (optionally "gz", "bz2", "xz") holding ``files`` (a name ending in "/" is a folder)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name.rstrip("/"))
            if name.endswith("/"):
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                archive.addfile(info, io.BytesIO(data))
    return compress(buffer.getvalue(), compression)


def write_file(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` (folders created) and return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# --- MLE-bench uploads ---------------------------------------------------------------------


def run_id(competition_id: str, index: int, salt: str = "") -> str:
    """A run folder name as MLE-bench makes it, ``<competition>_<uuid>`` (deterministic here)."""
    digest = hashlib.sha256(f"{competition_id}:{index}:{salt}".encode()).hexdigest()
    return f"{competition_id}_{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def run_group_files(
    run_group: str,
    competition_ids: Iterable[str],
    *,
    runs_per_competition: int = 1,
    without_submission: Iterable[str] = (),
    csv: bytes | Callable[[str, int], bytes] = SUBMISSION_CSV,
    prefix: str = "",
) -> dict[str, bytes]:
    """The files of an MLE-bench run-group folder (``prefix`` + ``run_group/``...).

    One run folder per competition and seed with ``submission/submission.csv``,
    ``logs/run.log`` and ``code/train.py``; runs of competitions in
    ``without_submission`` have logs and code but no submission. ``csv`` is the
    submission's content, or a function of (competition id, run index) giving it.
    metadata.json lists every run like ``run_agent.py`` writes it.
    """
    without = set(without_submission)
    base = f"{prefix}{run_group}/"
    files: dict[str, bytes] = {}
    runs = {}
    for cid in competition_ids:
        for index in range(runs_per_competition):
            rid = run_id(cid, index, run_group)
            runs[rid] = {"success": cid not in without}
            if cid not in without:
                content = csv(cid, index) if callable(csv) else csv
                files[f"{base}{rid}/submission/submission.csv"] = content
            files[f"{base}{rid}/logs/run.log"] = b"agent log\n"
            files[f"{base}{rid}/code/train.py"] = b"print('hello')\n"
    metadata = {"run_group": run_group, "created_at": "2024-10-01T00-00-00-GMT", "runs": runs}
    files[f"{base}metadata.json"] = json.dumps(metadata, indent=4).encode()
    return files


def run_groups_archive(
    competition_ids: Iterable[str],
    *,
    n_seeds: int = 3,
    fmt: str = "zip",
    agent: str = "dummy",
    without_submission: Iterable[str] = (),
    csv: bytes | Callable[[str, int], bytes] = SUBMISSION_CSV,
) -> bytes:
    """An archive ("zip", "tar", "tgz") of ``n_seeds`` run groups, one per seed, named so
    that sorting them by name gives seed order (0, 1, ...)."""
    competition_ids = list(competition_ids)
    files: dict[str, bytes] = {}
    for seed in range(n_seeds):
        group = f"2024-10-01T00-00-{seed:02d}-GMT_run-group_{agent}"
        files.update(
            run_group_files(
                group,
                competition_ids,
                without_submission=without_submission,
                csv=(lambda cid, _i, s=seed: csv(cid, s)) if callable(csv) else csv,
            )
        )
    if fmt == "zip":
        return zip_bytes(files)
    return tar_bytes(files, {"tar": "", "tgz": "gz"}[fmt])


def submissions_jsonl(lines: Iterable[Mapping]) -> bytes:
    """A submissions.jsonl as ``mlebench grade`` reads it, one JSON object per line."""
    return "".join(json.dumps(dict(line)) + "\n" for line in lines).encode()


def competition_report_dict(
    competition_id: str, score: float | None = 0.5, seed: int | None = None
) -> dict:
    """One MLE-bench competition report (a run that made a valid submission unless score is None)."""
    report = {
        "competition_id": competition_id,
        "score": score,
        "gold_threshold": 0.9,
        "silver_threshold": 0.8,
        "bronze_threshold": 0.7,
        "median_threshold": 0.6,
        "any_medal": False,
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "above_median": False,
        "submission_exists": score is not None,
        "valid_submission": score is not None,
        "is_lower_better": False,
        "created_at": datetime(2024, 10, 1, 12, 0).isoformat(),
        "submission_path": f"runs/{competition_id}/submission.csv",
    }
    if seed is not None:
        report["seed"] = seed
    return report


def grading_report_bytes(reports: Iterable[dict]) -> bytes:
    """A grading-report JSON file as MLE-bench writes it (total_* counts, then the reports)."""
    reports = list(reports)
    medals = sum(r["any_medal"] for r in reports)
    data = {
        "total_runs": len(reports),
        "total_runs_with_submissions": sum(r["submission_exists"] for r in reports),
        "total_valid_submissions": sum(r["valid_submission"] for r in reports),
        "total_medals": medals,
        "total_gold_medals": sum(r["gold_medal"] for r in reports),
        "total_silver_medals": sum(r["silver_medal"] for r in reports),
        "total_bronze_medals": sum(r["bronze_medal"] for r in reports),
        "total_above_median": sum(r["above_median"] for r in reports),
        "competition_reports": reports,
    }
    return json.dumps(data, indent=2).encode()


# --- malicious and malformed archives -------------------------------------------------------


def zip_with_member(name: str, data: bytes = b"x", *, unix_mode: int | None = None) -> bytes:
    """A zip with one member under a raw ``name`` (e.g. "../evil") and optional Unix mode bits."""
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    if unix_mode is not None:
        info.create_system = 3
        info.external_attr = unix_mode << 16
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ok.csv", b"a,b\n")
        archive.writestr(info, data)
    return buffer.getvalue()


def zip_symlink(name: str = "link.csv", target: str = "/etc/passwd") -> bytes:
    """A zip whose member is a Unix symbolic link (its data is the link target)."""
    return zip_with_member(name, target.encode(), unix_mode=stat.S_IFLNK | 0o777)


def tar_with_member(
    name: str,
    data: bytes = b"x",
    *,
    type: bytes = tarfile.REGTYPE,
    linkname: str = "",
    compression: str = "",
) -> bytes:
    """A tar with a harmless first file, then a member of raw ``name``, ``type`` and ``linkname``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        ok = tarfile.TarInfo("ok.csv")
        ok.size = 4
        archive.addfile(ok, io.BytesIO(b"a,b\n"))
        info = tarfile.TarInfo(name)
        info.type, info.linkname = type, linkname
        if type == tarfile.REGTYPE:
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        else:
            archive.addfile(info)
    return compress(buffer.getvalue(), compression)


def tar_symlink(name: str = "link.csv", target: str = "/etc/passwd") -> bytes:
    return tar_with_member(name, type=tarfile.SYMTYPE, linkname=target)


def tar_hardlink(name: str = "link.csv", target: str = "ok.csv") -> bytes:
    return tar_with_member(name, type=tarfile.LNKTYPE, linkname=target)


def tar_device(name: str = "dev/sda", *, block: bool = False) -> bytes:
    return tar_with_member(name, type=tarfile.BLKTYPE if block else tarfile.CHRTYPE)


def tar_fifo(name: str = "pipe") -> bytes:
    return tar_with_member(name, type=tarfile.FIFOTYPE)


def tar_duplicate_names(name: str = "a.csv") -> bytes:
    """A tar holding two members called ``name`` (extracting it naively keeps the second)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for data in (b"first\n", b"second\n"):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def tar_long_pax_header(name_length: int = 70_000) -> bytes:
    """A pax tar whose member name is ``name_length`` characters (a header read into memory)."""
    return tar_bytes({"a/" + "n" * name_length: b"x"})


def zip_many_members(count: int) -> bytes:
    """A zip of ``count`` tiny files."""
    return zip_bytes({f"f{i:06d}.csv": b"a\n" for i in range(count)})


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, produced on demand so a bomb never sits in memory."""

    def __init__(self, size: int):
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def write_zip_bomb(path: Path, size: int, name: str = "bomb.csv") -> Path:
    """A zip with one member of ``size`` zero bytes, written streaming (about size/1000 on disk)."""
    chunk = bytes(1024**2)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open(name, "w", force_zip64=size > 2**31) as member:
            left = size
            while left:
                member.write(chunk[: min(left, len(chunk))])
                left -= min(left, len(chunk))
    return path


def write_tar_gz_bomb(path: Path, size: int, name: str = "bomb.csv") -> Path:
    """A tar.gz with one member of ``size`` zero bytes, written streaming."""
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo(name)
        info.size = size
        archive.addfile(info, io.BufferedReader(_Zeros(size), buffer_size=1024**2))
    return path


def truncated(data: bytes, keep: float = 0.5) -> bytes:
    """The first ``keep`` fraction of ``data``: a transfer cut short."""
    return data[: max(1, int(len(data) * keep))]


def zip_lying_size(actual: bytes = b"0" * 4096, declared: int = 10) -> bytes:
    """A one-member zip whose headers declare ``declared`` bytes but whose data inflates to more."""
    data = bytearray(zip_bytes({"lie.csv": actual}))
    local = data.index(b"PK\x03\x04")
    data[local + 22 : local + 26] = declared.to_bytes(4, "little")
    central = data.index(b"PK\x01\x02")
    data[central + 24 : central + 28] = declared.to_bytes(4, "little")
    return bytes(data)


def zip_encrypted_flag() -> bytes:
    """A zip whose member is flagged as encrypted (general-purpose bit 0)."""
    data = bytearray(zip_bytes({"secret.csv": b"a,b\n"}))
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(signature)
        data[at + offset] |= 0x01
    return bytes(data)


def tar_with_garbage_after_first_member() -> bytes:
    """A tar whose second header is overwritten with garbage (damaged mid-archive)."""
    data = bytearray(tar_bytes({"a.csv": b"a,b\n", "b.csv": b"c,d\n"}))
    second = 1024  # header (512) + one data block (512) of the first member
    data[second : second + 512] = b"\xff" * 512
    return bytes(data)
