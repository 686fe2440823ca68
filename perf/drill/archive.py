"""Helpers of the drill: upload archives in MLE-bench's run-group layout and a
multipart/form-data body for ``POST /api/uploads/``.

An archive holds one folder per seed, ``2024-10-0{k}_run-group_drill/``, with
``metadata.json`` (``{"run_group", "created_at", "runs": {run_id: {"success": true}}}``)
and ``<run_id>/submission/submission.csv`` per competition, where ``run_id`` is
``<competition>_<8 hex>`` and the submission is the competition's
``prepared/public/sample_submission.csv``. The same layout as MLE-bench's ``run_agent.py``
writes (and as the test suite's archive builders make), written again here so that the
drill imports nothing from ``tests/``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import uuid
import zipfile
from collections.abc import Iterable
from pathlib import Path

DEMO_COMPETITIONS = ("demo-breast-cancer", "demo-diabetes", "demo-digits", "demo-wine")


def run_id(competition_id: str, seed: int, salt: str) -> str:
    """``<competition>_<8 hex>``, deterministic for (competition, seed, salt)."""
    digest = hashlib.sha256(f"{competition_id}:{seed}:{salt}".encode()).hexdigest()
    return f"{competition_id}_{digest[:8]}"


def run_group_files(
    data_dir: Path,
    *,
    seeds: int,
    salt: str,
    competitions: Iterable[str] = DEMO_COMPETITIONS,
    pad_bytes: int = 0,
) -> dict[str, bytes]:
    """The files (path in the archive -> content) of ``seeds`` run groups over
    ``competitions``. With ``pad_bytes``, the first run also holds a ``logs/run.log`` of
    that many random bytes (a big archive that takes a moment to send)."""
    competitions = list(competitions)
    files: dict[str, bytes] = {}
    padded = pad_bytes <= 0
    for k in range(1, seeds + 1):
        group = f"2024-10-{k:02d}_run-group_drill"
        runs = {}
        for cid in competitions:
            rid = run_id(cid, k, salt)
            runs[rid] = {"success": True}
            sample = Path(data_dir) / cid / "prepared" / "public" / "sample_submission.csv"
            files[f"{group}/{rid}/submission/submission.csv"] = sample.read_bytes()
            if not padded:
                files[f"{group}/{rid}/logs/run.log"] = os.urandom(pad_bytes)
                padded = True
        metadata = {"run_group": group, "created_at": "2024-10-01T00-00-00-GMT", "runs": runs}
        files[f"{group}/metadata.json"] = json.dumps(metadata, indent=4).encode()
    return files


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """A zip of ``files``: small members deflated, big ones (random padding) stored."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            method = zipfile.ZIP_STORED if len(data) > 1024**2 else zipfile.ZIP_DEFLATED
            archive.writestr(name, data, compress_type=method)
    return buffer.getvalue()


def build_archive(
    data_dir: Path, *, seeds: int, salt: str, pad_bytes: int = 0
) -> tuple[bytes, int]:
    """(zip bytes, number of runs) of a run-group upload over the four demo competitions."""
    files = run_group_files(data_dir, seeds=seeds, salt=salt, pad_bytes=pad_bytes)
    return zip_bytes(files), seeds * len(DEMO_COMPETITIONS)


def multipart_body(
    fields: dict[str, str], file_field: str, filename: str, content: bytes
) -> tuple[bytes, str]:
    """(body, content type) of a multipart/form-data request with ``fields`` and one file."""
    boundary = f"----drill{uuid.uuid4().hex}"
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            + value.encode()
            + b"\r\n"
        )
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
        f'filename="{filename}"\r\nContent-Type: application/zip\r\n\r\n'.encode()
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
