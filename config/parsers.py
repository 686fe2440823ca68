"""The parsers every environment variable of mleboard is read with, whichever package reads
it (``config.variables`` says which parser each variable has).

Each takes the text of a variable (already stripped) and returns its value, or raises
``ValueError`` with what was expected: a typo ("ture", "1gg") must stop start-up, never
silently turn a feature off or a limit into something else. ``config.env`` adds the
variable's name to the message.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path


class ConfigurationError(ValueError):
    """A variable is set to something its parser refuses (the message names it), or a name
    read is not declared."""


TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def parse_bool(text: str) -> bool:
    """``true/false``, ``1/0``, ``yes/no``, ``on/off`` (any case); nothing else."""
    value = text.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ValueError("expected true or false (also 1/0, yes/no, on/off)")


def parse_int(text: str) -> int:
    """A whole number, ``_`` allowed between digits (``20_000``)."""
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError("expected a whole number") from None


def parse_positive_int(text: str) -> int:
    value = parse_int(text)
    if value < 1:
        raise ValueError("expected a whole number of at least 1")
    return value


def parse_non_negative_int(text: str) -> int:
    value = parse_int(text)
    if value < 0:
        raise ValueError("expected a whole number, 0 or more")
    return value


def parse_float(text: str) -> float:
    """A finite number."""
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError("expected a number") from None
    if not math.isfinite(value):
        raise ValueError("expected a finite number")
    return value


def parse_positive_float(text: str) -> float:
    value = parse_float(text)
    if not value > 0:
        raise ValueError("expected a number above 0")
    return value


def parse_share(text: str) -> float:
    """A share above 0 and at most 1."""
    value = parse_float(text)
    if not 0 < value <= 1:
        raise ValueError("expected a fraction above 0 and at most 1")
    return value


def parse_fraction(text: str) -> float:
    """A number from 0 to 1."""
    value = parse_float(text)
    if not 0 <= value <= 1:
        raise ValueError("expected a number from 0 to 1")
    return value


_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
# The largest size accepted: 1024t (1 PiB), more than any machine has and well within
# the 64-bit integers Docker and the database store sizes in.
MAX_SIZE = 1024**5


def parse_size(text: str | int) -> int:
    """A size like ``"512m"``, ``"4G"``, ``"1.5g"``, ``"2GiB"``, ``"1gb"`` or ``1024`` in
    bytes, above 0.

    Units are binary (k = 1024), like Docker's own flags; ``1g``, ``1gb`` and ``1GiB`` are
    the same size. Raises ``ValueError`` on anything else, and on sizes over ``MAX_SIZE``.
    """
    if isinstance(text, int):
        value = text
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgtb]?)(?:i?b)?\s*", text.lower())
        if not match:
            raise ValueError(f"not a size: {text!r} (use e.g. 512m, 4g)")
        number = float(match.group(1)) * _SIZE_UNITS[match.group(2)]  # inf if huge
        value = int(number) if number <= MAX_SIZE else MAX_SIZE + 1
    if value <= 0:
        raise ValueError(f"size must be positive, got {text!r}")
    if value > MAX_SIZE:
        raise ValueError(f"size {text!r} is too large: at most 1024t (1 PiB)")
    return value


def parse_size_or_zero(text: str) -> int:
    """A size as ``parse_size`` reads it, or ``0`` (for limits where 0 means none)."""
    if re.fullmatch(r"0+(\.0*)?\s*[kmgtb]?(i?b)?", text.strip().lower()):
        return 0
    return parse_size(text)


_DURATION_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
# Ten years: longer than anything mleboard waits for, short enough for every clock.
MAX_DURATION_S = 10 * 365 * 86400


def parse_duration(text: str) -> float:
    """Seconds from ``"90"``, ``"90s"``, ``"1.5s"``, ``"15m"``, ``"24h"`` or ``"2d"``: 0 or
    more, at most ten years. A plain number is seconds."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhd]?)", text.strip().lower())
    if not match:
        raise ValueError("expected a duration like 90s, 15m, 24h (a plain number is seconds)")
    value = float(match.group(1)) * _DURATION_UNITS[match.group(2)]
    if value > MAX_DURATION_S:
        raise ValueError("expected a duration of at most ten years")
    return value


def parse_whole_seconds(text: str) -> int:
    """A duration as ``parse_duration`` reads it, in whole seconds (``1.5s`` is refused)."""
    value = parse_duration(text)
    if value != int(value):
        raise ValueError("expected whole seconds (e.g. 90s, 15m)")
    return int(value)


def parse_positive_whole_seconds(text: str) -> int:
    value = parse_whole_seconds(text)
    if value < 1:
        raise ValueError("expected a duration of at least 1s")
    return value


_RATE_PERIODS = ("s", "m", "h", "d")


def parse_rate(text: str) -> str | None:
    """A request rate as Django REST framework writes it (``30/hour``, ``5/min``,
    ``N/sec|min|hour|day``); ``off`` (or ``none``) -> ``None``: no limit."""
    value = text.strip().lower()
    if value in ("off", "none"):
        return None
    count, _, period = value.partition("/")
    if not (
        count.isascii()
        and count.isdigit()
        and int(count) > 0
        and period[:1] in _RATE_PERIODS
        and "/" not in period
    ):
        raise ValueError("expected a rate like 30/hour or 5/min (or off)")
    return value


def parse_str(text: str) -> str:
    return text


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")


def parse_name(text: str) -> str:
    """A short name: letters, digits, ``_``, ``.`` and ``-``, starting with a letter or a
    digit, at most 63 characters (fit for a Docker label's value or a host name)."""
    if not _NAME.fullmatch(text):
        raise ValueError("expected a name of letters, digits, _ . - (at most 63 characters)")
    return text


def parse_path(text: str) -> Path:
    return Path(text).expanduser()


def list_of(
    item: Callable[[str], object] = parse_str, separator: str = ","
) -> Callable[[str], list]:
    """A parser of ``separator``-separated items (blank items skipped), each read by
    ``item``."""

    def parse(text: str) -> list:
        return [item(part.strip()) for part in text.split(separator) if part.strip()]

    parse.__doc__ = f"a {separator!r}-separated list"
    return parse


def parse_path_list(text: str) -> list[Path]:
    """Folders separated as ``PATH`` is (``:`` on POSIX)."""
    return list_of(parse_path, os.pathsep)(text)


def one_of(choices: Iterable[str]) -> Callable[[str], str]:
    """A parser accepting exactly one of ``choices`` (case as written)."""
    allowed = tuple(choices)

    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return text

    return parse


def url_with_scheme(*schemes: str) -> Callable[[str], str]:
    """A parser of URLs whose scheme is one of ``schemes``."""

    def parse(text: str) -> str:
        if text.split("://", 1)[0].lower() not in schemes or "://" not in text:
            raise ValueError(f"expected a {' or '.join(s + '://' for s in schemes)} URL")
        return text

    return parse


def parse_prices(text: str) -> dict[str, tuple[float, float]]:
    """``"gpt-4o=2.5/10,o1-preview=15/60"``: per model, dollars per million prompt tokens
    and per million completion tokens (``benchmark.cost`` makes them ``Price`` values)."""
    prices: dict[str, tuple[float, float]] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        model, sep, numbers = part.rpartition("=")
        prompt, slash, completion = numbers.partition("/")
        try:
            values = (float(prompt), float(completion))
        except ValueError:
            values = (-1.0, -1.0)
        if not sep or not model.strip() or not slash or not all(0 <= v < math.inf for v in values):
            raise ValueError(
                f"{part!r} is not MODEL=PROMPT/COMPLETION (dollars per million tokens, e.g. "
                "gpt-4o=2.5/10)"
            )
        prices[model.strip()] = values
    return prices
