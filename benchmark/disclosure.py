"""The conditions an experiment ran under (its *disclosure*), declared once, and the
*comparability class* they place it in.

Against MLE-bench's recommended setup (24 h per run, 36 vCPUs, 440 GB of RAM, one 24 GB
A10, at least 3 seeds, no known leakage) an experiment is ``canonical`` (within all of it),
``beyond`` (past any of it, each reason named) or ``undisclosed`` (silent on some of it,
what is missing named); nothing unknown is guessed. ``FIELDS`` is the one declaration the
forms, the API, the command line and the archive's metadata read: ``parse`` raises
``DisclosureError`` naming each bad field, ``missing`` lists what publishing still needs,
``comparability`` gives the class and its reasons.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import yaml

CANONICAL = "canonical"
BEYOND = "beyond"
UNDISCLOSED = "undisclosed"
CLASSES = (CANONICAL, BEYOND, UNDISCLOSED)
CLASS_LABELS = {
    CANONICAL: "Canonical",
    BEYOND: "Beyond canonical",
    UNDISCLOSED: "Undisclosed",
}

# MLE-bench's recommended setup.
CANONICAL_HOURS = 24.0
CANONICAL_VCPUS = 36
# The README says "440GB RAM"; read as 440 GiB so that a setup described loosely in
# either unit is not called beyond for the difference.
CANONICAL_RAM_GIB = 440.0
CANONICAL_GPUS = 1
CANONICAL_GPU = "A10 (24 GB)"
CANONICAL_MIN_SEEDS = 3
PASS_AT_1 = "pass@1"

# GPU models, by how they stand against MLE-bench's one 24 GB A10: at most its memory and
# of its generation or older (within), or more of either (beyond). Matched on the name a
# person gives, case and spaces aside; anything else is named as not known.
_GPUS_WITHIN = ("a10", "a10g", "l4", "t4", "v100", "p100", "p40", "k80", "a16", "a2")
_GPUS_BEYOND = (
    "a100",
    "h100",
    "h200",
    "h20",
    "h800",
    "a800",
    "b100",
    "b200",
    "gb200",
    "l40",
    "l40s",
    "a40",
    "a6000",
    "rtx6000",
    "rtx4090",
    "rtx5090",
    "mi250",
    "mi300",
    "mi300x",
)

MAX_TEXT = 300
MAX_MODELS = 32


class DisclosureError(ValueError):
    """What a person sent cannot be read; ``errors`` maps each field to why."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{name}: {why}" for name, why in errors.items()))


@dataclass(frozen=True)
class Field:
    name: str
    label: str  # as a form and a missing list say it
    help: str
    parse: Callable[[object], object]
    # Publishing asks for it (an upload may leave it out).
    required: bool = True


def _text(value: object, *, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise ValueError("must be text")
    value = value.strip()
    if "\x00" in value:
        raise ValueError("contains a NUL character")
    if len(value) > limit:
        raise ValueError(f"is {len(value):,} characters long; at most {limit:,}")
    return value


def _whole(low: int, high: int, unit: str) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, bool):
            raise ValueError("must be a whole number")
        if isinstance(value, str):
            text = value.strip()
            if not re.fullmatch(r"[0-9]{1,9}", text):
                raise ValueError(f"must be a whole number of {unit}, got {text[:40]!r}")
            value = int(text)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise ValueError(f"must be a whole number of {unit}")
        if not low <= value <= high:
            raise ValueError(
                f"must be a whole number from {low:,} to {high:,} {unit}, got {value:,}"
            )
        return value

    return parse


def _number(low: float, high: float, unit: str) -> Callable[[object], float]:
    def parse(value: object) -> float:
        if isinstance(value, bool):
            raise ValueError("must be a number")
        if isinstance(value, str):
            text = value.strip()
            if not re.fullmatch(r"[0-9]{1,9}(\.[0-9]{1,6})?", text):
                raise ValueError(f"must be a number of {unit}, got {text[:40]!r}")
            value = float(text)
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"must be a number of {unit}")
        if not low < value <= high:
            raise ValueError(
                f"must be more than {low:g} and at most {high:,g} {unit}, got {value:g}"
            )
        return float(value)

    return parse


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "true", "1", "no", "false", "0"):
        return value.strip().lower() in ("yes", "true", "1")
    raise ValueError("must be yes or no (true or false)")


def _url(value: object) -> str:
    text = _text(value, limit=500)
    if text and not re.fullmatch(r"https?://[^\s/$.?#][^\s]*", text):
        raise ValueError(f"must be an http(s) address, got {text[:60]!r}")
    return text


def _models(value: object) -> list[str]:
    if isinstance(value, str):
        value = [part for part in re.split(r"[,\n]", value) if part.strip()]
    if not isinstance(value, list | tuple):
        raise ValueError("must be a list of model names")
    if len(value) > MAX_MODELS:
        raise ValueError(f"lists {len(value)} models; at most {MAX_MODELS}")
    names = []
    for item in value:
        name = _text(item, limit=100)
        if not name:
            raise ValueError("has an empty model name")
        if name not in names:
            names.append(name)
    if not names:
        raise ValueError("must name at least one model")
    return names


_SELECTION = re.compile(r"(?:pass@1|best-of-([0-9]{1,3}))")


def _selection(value: object) -> str:
    text = _text(value, limit=20).lower().replace(" ", "")
    found = _SELECTION.fullmatch(text)
    if not found or (found.group(1) and int(found.group(1)) < 2):
        raise ValueError("must be pass@1 or best-of-K (K of 2 or more), e.g. best-of-3")
    return text


def _gpu_model(value: object) -> str:
    return _text(value, limit=100)


FIELDS: tuple[Field, ...] = (
    Field("gpus", "GPUs", "how many GPUs each run had (0 for none)", _whole(0, 64, "GPUs")),
    Field(
        "gpu_model",
        "GPU model",
        "the GPUs' model and memory, e.g. A10 24GB (empty when there are none)",
        _gpu_model,
        required=False,
    ),
    Field("vcpus", "vCPUs", "virtual CPUs each run had", _whole(1, 4096, "vCPUs")),
    Field("ram_gib", "RAM (GiB)", "memory each run had, in GiB", _number(0, 65536, "GiB")),
    Field("hours", "Hours per run", "the time limit of each run, in hours", _number(0, 1000, "h")),
    Field(
        "models",
        "Models",
        "every model the agent used (an ensemble lists each)",
        _models,
    ),
    Field("internet", "Internet access", "whether runs could reach the internet", _flag),
    Field(
        "test_labels",
        "Uses test labels",
        "whether the agent used test labels or a known leakage of them",
        _flag,
    ),
    Field(
        "leakage_url",
        "Leakage link",
        "where the leakage it uses is described",
        _url,
        required=False,
    ),
    Field(
        "seeds",
        "Seeds",
        "how many seeds (runs per competition) the figures average",
        _whole(1, 1000, "seeds"),
    ),
    Field(
        "selection",
        "Selection",
        "pass@1 (every seed counts) or best-of-K (the best of K attempts per competition)",
        _selection,
    ),
    Field("source_url", "Source code", "where the agent's code is", _url),
)
BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}


@dataclass(frozen=True)
class Comparability:
    cls: str  # CANONICAL, BEYOND or UNDISCLOSED
    reasons: tuple[str, ...] = ()
    undisclosed: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict:
        return {
            "class": self.cls,
            "reasons": list(self.reasons),
            "undisclosed": list(self.undisclosed),
        }

    @property
    def label(self) -> str:
        return CLASS_LABELS[self.cls]


def parse(data: Mapping[str, object], *, partial: bool = True) -> dict[str, object]:
    """The disclosure in ``data`` read through ``FIELDS``: every value checked, empty ones
    left out. Unknown keys, bad values and (with ``partial=False``) missing ones raise
    ``DisclosureError`` naming each field."""
    if not isinstance(data, Mapping):
        raise DisclosureError({"disclosure": "must be an object of field: value"})
    errors: dict[str, str] = {}
    values: dict[str, object] = {}
    for key, value in data.items():
        if not isinstance(key, str) or key not in BY_NAME:
            shown = key[:40] if isinstance(key, str) else repr(key)[:40]
            errors[str(shown)] = "is not a disclosure field; the fields are " + ", ".join(BY_NAME)
            continue
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        try:
            values[key] = BY_NAME[key].parse(value)
        except ValueError as error:
            errors[key] = str(error)
    if values.get("gpus") and not values.get("gpu_model") and "gpu_model" not in errors:
        if not partial:
            errors["gpu_model"] = "name the GPUs' model when there are GPUs"
    if not partial:
        for name in missing(values):
            errors.setdefault(name, "is missing")
    if errors:
        raise DisclosureError(errors)
    return values


def missing(values: Mapping[str, object]) -> list[str]:
    """The fields publishing needs that ``values`` leaves out, by name."""
    out = [f.name for f in FIELDS if f.required and values.get(f.name) in (None, "", [])]
    if values.get("gpus") and not values.get("gpu_model"):
        out.append("gpu_model")
    if values.get("test_labels") and not values.get("leakage_url"):
        out.append("leakage_url")
    return out


def labels(names) -> list[str]:
    return [BY_NAME[name].label for name in names]


def gpu_standing(model: str) -> str | None:
    """``within`` or ``beyond`` the canonical A10 for a GPU model named as people write
    them ("NVIDIA A100 80GB", "h100-sxm"); None for a model not known here."""
    words = re.sub(r"[^a-z0-9]+", " ", model.lower()).split()
    words = [w for w in words if w not in ("nvidia", "tesla", "amd", "instinct", "geforce")]
    joined = "".join(words)
    for name in sorted(_GPUS_BEYOND + _GPUS_WITHIN, key=len, reverse=True):
        if name in words or (len(name) >= 4 and joined.startswith(name)):
            memory = re.search(r"([0-9]{2,3})\s*g", model.lower())
            if memory and int(memory.group(1)) > 24:
                return "beyond"
            return "beyond" if name in _GPUS_BEYOND else "within"
    return None


def _number_text(value: float) -> str:
    return f"{value:g}"


def comparability(values: Mapping[str, object]) -> Comparability:
    """The class of an experiment with these disclosed conditions, and why."""
    reasons: list[str] = []
    unknown: list[str] = []

    gpus = values.get("gpus")
    if gpus is None:
        unknown.append("GPUs")
    else:
        if gpus > CANONICAL_GPUS:
            reasons.append(f"{gpus} GPUs")
        if gpus:
            model = str(values.get("gpu_model") or "")
            standing = gpu_standing(model) if model else None
            if standing == "beyond":
                reasons.append(f"GPU beyond an A10 24 GB ({model})")
            elif standing is None:
                unknown.append(f"GPU model ({model})" if model else "GPU model")
    vcpus = values.get("vcpus")
    if vcpus is None:
        unknown.append("vCPUs")
    elif vcpus > CANONICAL_VCPUS:
        reasons.append(f"{vcpus} vCPUs")
    ram = values.get("ram_gib")
    if ram is None:
        unknown.append("RAM")
    elif ram > CANONICAL_RAM_GIB:
        reasons.append(f"{_number_text(ram)} GiB RAM")
    hours = values.get("hours")
    if hours is None:
        unknown.append("hours")
    elif hours > CANONICAL_HOURS:
        reasons.append(f"{_number_text(hours)} h")
    models = values.get("models")
    if not models:
        unknown.append("models")
    elif len(models) > 1:
        reasons.append(f"ensemble of {len(models)} models")
    test_labels = values.get("test_labels")
    if test_labels is None:
        unknown.append("use of test labels")
    elif test_labels:
        reasons.append("uses leaked test labels")
    seeds = values.get("seeds")
    if seeds is None:
        unknown.append("seeds")
    elif seeds < CANONICAL_MIN_SEEDS:
        reasons.append(f"{seeds} seed" + ("" if seeds == 1 else "s"))
    selection = values.get("selection")
    if selection is None:
        unknown.append("selection")
    elif selection != PASS_AT_1:
        reasons.append(selection)
    if reasons:
        cls = BEYOND
    elif unknown:
        cls = UNDISCLOSED
    else:
        cls = CANONICAL
    return Comparability(cls, tuple(reasons), tuple(unknown))


_ENSEMBLE = re.compile(r"^\s*ensemble\s*\((.*)\)\s*$", re.IGNORECASE)


def models_from_published(llm: str) -> list[str] | None:
    """The models of a published leaderboard row's LLM cell, as written there ("Ensemble
    (a, b)", "o3 + GPT-4.1", "gpt-4o"); None when it says it is undisclosed."""
    text = llm.strip()
    if not text or text.lower() in ("undisclosed", "unknown", "-", "n/a"):
        return None
    found = _ENSEMBLE.match(text)
    if found:
        return [m.strip() for m in found.group(1).split(",") if m.strip()]
    return [m.strip() for m in re.split(r"\s\+\s", text) if m.strip()]


# A disclosure file (``disclosure.yaml`` or ``.json``) is a few lines; larger is not one.
MAX_FILE_BYTES = 64 * 1024
FILE_NAMES = ("disclosure.yaml", "disclosure.yml", "disclosure.json")


def read_file(data: bytes, name: str) -> dict[str, object]:
    """The disclosure a file holds (YAML, of which JSON is a part), checked through
    ``parse``; ``DisclosureError`` says what is wrong, naming the file."""
    if len(data) > MAX_FILE_BYTES:
        raise DisclosureError(
            {name: f"is {len(data):,} bytes; a disclosure file is at most {MAX_FILE_BYTES:,}"}
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DisclosureError({name: "is not UTF-8 text"}) from None
    try:
        loaded = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        raise DisclosureError({name: f"is not valid YAML or JSON{at}"}) from None
    if not isinstance(loaded, Mapping):
        raise DisclosureError({name: "must hold field: value lines, e.g. gpus: 1"})
    try:
        return parse(loaded)
    except DisclosureError as error:
        raise DisclosureError({f"{name}: {k}": v for k, v in error.errors.items()}) from None
