"""Reading configuration from the environment, failing loudly on values that make no sense.

A typo in a boolean ("ture") silently turning a feature off is worse than a crash at
start-up, so these helpers raise instead of guessing.
"""

import os


class ConfigurationError(ValueError):
    pass


def envstr(name: str, default: str) -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: str) -> bool:
    value = os.environ.get(name, default).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ConfigurationError(f"{name} must be true or false, got {value!r}")


def envint(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be an integer, got {raw!r}") from None


def envfraction(name: str, default: str) -> float:
    """A fraction above 0 and at most 1."""
    raw = os.environ.get(name, default).strip()
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0.0 < value <= 1.0:  # also refuses nan
        raise ConfigurationError(f"{name} must be a fraction above 0 and at most 1, got {raw!r}")
    return value


def envrate(name: str, default: str) -> str | None:
    """A request rate as Django REST framework writes it ("30/hour", "5/min"); "off" -> None
    (no limit)."""
    value = os.environ.get(name, default).strip().lower()
    if value in ("off", "none", ""):
        return None
    count, _, period = value.partition("/")
    if not (
        count.isdigit()
        and int(count) > 0
        and period[:1] in ("s", "m", "h", "d")
        and "/" not in period
    ):
        raise ConfigurationError(
            f"{name} must be a rate like 30/hour or 5/min (or off), got {value!r}"
        )
    return value
