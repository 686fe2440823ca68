"""What ``mleboard submit`` remembers between invocations: per (site, payload), the
address of the unfinished tus upload and, once sent, the upload it became, in the user's
cache folder. Running the same command again reads it to continue, or to follow."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli.submit.transfer import Payload


def state_file(site: str, payload: Payload) -> Path:
    from cli.site_api import cache_dir

    key = hashlib.sha256(f"{site}\0{payload.fingerprint}".encode()).hexdigest()[:32]
    return cache_dir() / "uploads" / f"{key}.json"


def load_state(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_state(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(data), encoding="utf-8")
    temp.replace(path)
