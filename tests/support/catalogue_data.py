"""Synthetic MLE-bench data for every competition mleboard grades, built the same way for all.

    comp = build_competition("spaceship-titanic", tmp_path)
    graders.grade_submission(comp.perfect_submission, comp.competition_id, comp.data_dir)

Each competition gets MLE-bench's prepared layout (``<data>/<id>/prepared/{public,private}``):
private answers at the path its grader reads, a ``sample_submission.csv`` built like
MLE-bench's ``prepare.py`` (constant or placeholder predictions, always valid), a short
``description.md``, an id-only ``test.csv`` and a tiny ``train.csv``; and, outside
``prepared/``, a perfect submission under ``<data>/submissions/<id>/perfect.csv``.

Column-metric competitions reuse ``tests/support/core_cases.py`` (one case of about sixty
rows, repeated in blocks with renamed ids to reach ``n_rows``); the competitions graded from
masks, boxes, sequences and text have their own builders below. Perfect and sample
submissions always list the same rows in the same order, so ``submission_variant`` can mix
them row by row.
"""

from __future__ import annotations

import csv
import math
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import graders
from tests.support.core_cases import CASES
from tests.support.synthetic import CompetitionLayout, write_csv

# Columns besides the grader's id column that name an entity and must be renamed per block.
_EXTRA_KEY_COLUMNS = {"osic-pulmonary-fibrosis-progression": ("Patient",)}
_INT_ID_STRIDE = 10**12  # integer ids of block b are shifted by b * stride (no collisions)
_TRAIN_ROWS = 10
_TRAIN_BLOCK = 999  # train ids are renamed like a block of their own


@dataclass(frozen=True)
class Tables:
    """One competition's files as columns: answers (or the raw text of a JSONL answers file),
    a perfect and a sample submission listing the same rows in the same order, and the score
    the perfect submission earns (None when not a fixed value)."""

    answers: dict[str, list] | str
    perfect: dict[str, list]
    sample: dict[str, list]
    best: float | None


@dataclass(frozen=True)
class SyntheticCompetition:
    """One competition's synthetic prepared data and two reference submissions."""

    competition_id: str
    data_dir: Path  # the MLE-bench prepared layout root (holds <competition_id>/prepared/)
    answers: Path  # the private answers, at the path the competition's grader reads
    sample_submission: Path  # prepared/public/sample_submission.csv (valid)
    perfect_submission: Path  # scores the best possible score
    best_score: float | None  # what the perfect submission scores; None if not a fixed value


def build_competition(
    competition_id: str, data_dir: Path, *, seed: int = 0, n_rows: int = 40
) -> SyntheticCompetition:
    """Write one competition's synthetic data under ``data_dir``; returns where it all is.

    ``n_rows`` is a target size: column competitions get at least ``n_rows`` answer rows (a
    whole number of ~60-row blocks), the others about ``n_rows`` images, notebooks or
    examples. The same ``seed`` gives the same files. Raises ``graders.UnknownCompetition``
    for an id without a grader.
    """
    grader = graders.grader_for(competition_id)
    data_dir = Path(data_dir)
    layout = CompetitionLayout(data_dir, competition_id, answers=grader.answers)
    tables = competition_tables(competition_id, seed=seed, n_rows=n_rows)
    tables = Tables(
        answers=answers_in_mlebench_layout(competition_id, tables.answers),
        perfect=tables.perfect,
        sample=tables.sample,
        best=tables.best,
    )
    if isinstance(tables.answers, str):
        layout.write_answers_text(tables.answers)
    else:
        layout.write_answers(tables.answers)
    sample = layout.write_sample_submission(tables.sample)
    perfect = layout.write_submission("perfect.csv", tables.perfect)
    _write_public_files(layout, tables, competition_id, seed)
    return SyntheticCompetition(
        competition_id=competition_id,
        data_dir=data_dir,
        answers=layout.answers_path,
        sample_submission=sample,
        perfect_submission=perfect,
        best_score=tables.best,
    )


# Graders that take every answers column but the id as a class (as MLE-bench's grade.py
# does for these): the synthetic data uses a subset of the real classes, so their answers
# are not widened to every class of the layout (the submissions would need them too).
CLASSES_FROM_ANSWERS = frozenset(
    {
        "dog-breed-identification",
        "freesound-audio-tagging-2019",
        "google-quest-challenge",
        "leaf-classification",
    }
)


def answers_in_mlebench_layout(competition_id: str, answers):
    """``answers`` (name -> values) with exactly the columns MLE-bench's prepare.py writes,
    in its order: columns the grader does not read are added with filler values of their
    dtype. Raises AssertionError when the synthetic answers hold a column the real file
    does not have. Text answers (JSONL) and mleboard's demo competitions pass through."""
    from graders.layouts import column_names, load_layouts

    layout = load_layouts().get(competition_id)
    if layout is None or not isinstance(answers, dict):
        return answers
    wanted = layout["answers_columns"]
    names = column_names(wanted)
    unknown = [c for c in answers if c not in names]
    assert not unknown, f"{competition_id}: synthetic answers columns {unknown} not in prepare.py's"
    n = len(next(iter(answers.values())))
    out: dict[str, list] = {}
    for name, dtype, *_ in wanted:
        if name in answers:
            out[name] = answers[name]
        elif competition_id not in CLASSES_FROM_ANSWERS:
            out[name] = _filler(dtype, n, name)
    return out


def _filler(dtype: str, n: int, name: str) -> list:
    if dtype == "int64":
        return list(range(n))
    if dtype == "float64":
        return [0.25 + i % 7 for i in range(n)]
    if dtype == "bool":
        return [i % 2 == 0 for i in range(n)]
    return [f"{name} {i}, text" for i in range(n)]  # a comma: quoting exercised too


def build_catalogue(
    data_dir: Path,
    competition_ids: Iterable[str] | None = None,
    *,
    seed: int = 0,
    n_rows: int = 40,
) -> dict[str, SyntheticCompetition]:
    """Build every competition with a grader (or the given ones); id -> its synthetic data."""
    ids = graders.known_competitions() if competition_ids is None else list(competition_ids)
    return {cid: build_competition(cid, data_dir, seed=seed, n_rows=n_rows) for cid in ids}


def submission_variant(
    comp: SyntheticCompetition, path: Path, *, quality: float, seed: int
) -> Path:
    """Write a valid submission at ``path`` mixing the sample's and the perfect's rows.

    A share ``quality`` (0..1) of the rows, picked at random with ``seed``, comes from the
    perfect submission and the rest from the sample, so quality 0 is the sample and 1 the
    perfect submission. Returns ``path``.
    """
    if not 0.0 <= quality <= 1.0:
        raise ValueError(f"quality must lie in [0, 1]; got {quality}")
    perfect = _read_rows(comp.perfect_submission)
    sample = _read_rows(comp.sample_submission)
    if perfect[0] != sample[0] or len(perfect) != len(sample):
        raise ValueError(f"{comp.competition_id}: perfect and sample submissions differ in shape")
    body_perfect, body_sample = perfect[1:], sample[1:]
    n = len(body_perfect)
    chosen = np.zeros(n, dtype=bool)
    chosen[np.random.default_rng(seed).permutation(n)[: round(quality * n)]] = True
    rows = [p if pick else s for p, s, pick in zip(body_perfect, body_sample, chosen, strict=True)]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows([perfect[0], *rows])
    return path


def competition_tables(competition_id: str, *, seed: int = 0, n_rows: int = 40) -> Tables:
    """The answers, perfect and sample submissions of one competition, as columns (no files).

    Competitions sharing a builder still get different data: the random stream depends on
    the competition id as well as on ``seed``.
    """
    stream = [seed, zlib.crc32(competition_id.encode())]
    complex_builder = COMPLEX_BUILDERS.get(competition_id)
    if complex_builder is not None:
        return complex_builder(np.random.default_rng(stream), max(n_rows, 1))
    if competition_id in CASES:
        return _tiled_core_case(competition_id, stream, n_rows)
    raise graders.UnknownCompetition(f"No synthetic data builder for '{competition_id}'.")


# --- column competitions: core cases repeated in blocks -----------------------------------------


def _tiled_core_case(competition_id: str, stream: list[int], n_rows: int) -> Tables:
    """Core case blocks (fresh random labels each) until the answers reach ``n_rows`` rows."""
    id_column = graders.grader_for(competition_id).id_column
    keys = (id_column, *_EXTRA_KEY_COLUMNS.get(competition_id, ()))
    answers: dict[str, list] = {}
    perfect: dict[str, list] = {}
    sample: dict[str, list] = {}
    best = None
    block = 0
    while block == 0 or len(next(iter(answers.values()))) < n_rows:
        case = CASES[competition_id](np.random.default_rng([*stream, block]))
        best = case.best
        for into, columns in (
            (answers, case.answers),
            (perfect, case.perfect),
            (sample, case.constant),
        ):
            for name, values in columns.items():
                renamed = _renamed(values, block) if name in keys else list(values)
                into.setdefault(name, []).extend(renamed)
        block += 1
    return Tables(answers=answers, perfect=perfect, sample=sample, best=best)


def _renamed(values: list, block: int) -> list:
    """Ids of block ``block`` made distinct from every other block's (block 0 unchanged).

    Text ids get a prefix without an underscore, so ids that encode structure after their
    first underscore (``<study>_C1``, ``<patient>_<week>``) keep it.
    """
    if block == 0:
        return list(values)
    return [v + block * _INT_ID_STRIDE if isinstance(v, int) else f"b{block}-{v}" for v in values]


# --- public files ------------------------------------------------------------------------------


def _write_public_files(
    layout: CompetitionLayout, tables: Tables, competition_id: str, seed: int
) -> None:
    """``description.md``, an id-only ``test.csv`` and a small ``train.csv`` like the answers."""
    layout.public.mkdir(parents=True, exist_ok=True)
    (layout.public / "description.md").write_text(
        f"Synthetic stand-in for {competition_id}: random data shaped like the real task, "
        "for testing graders only.\n",
        encoding="utf-8",
    )
    id_column = next(iter(tables.sample))
    write_csv(layout.public / "test.csv", {id_column: tables.sample[id_column]})
    if isinstance(tables.answers, dict):
        train = competition_tables(competition_id, seed=seed + 10_000, n_rows=_TRAIN_ROWS)
        if isinstance(train.answers, dict):
            keys = (id_column, *_EXTRA_KEY_COLUMNS.get(competition_id, ()))
            write_csv(layout.public / "train.csv", _train_rows(train.answers, keys))


def _train_rows(answers: dict[str, list], keys: tuple[str, ...]) -> dict[str, list]:
    """The first rows of another draw of the answers, ids renamed apart from the test ids."""
    rows = {name: list(values[:_TRAIN_ROWS]) for name, values in answers.items()}
    for name in set(keys) & set(rows):
        rows[name] = _renamed(rows[name], _TRAIN_BLOCK)
    return rows


def _read_rows(path: Path) -> list[list[str]]:
    with Path(path).open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def same_score(score: float | None, best: float) -> bool:
    """Whether a grader's rounded score equals ``best`` (exactly for infinities)."""
    if score is None:
        return False
    if math.isinf(best) or math.isinf(score):
        return score == best
    return abs(score - best) <= 1e-5


# --- masks: run-length encodings -----------------------------------------------------------------


def _rle(mask: np.ndarray) -> str:
    """1-indexed 'start length' runs of a mask read column-major (MLE-bench's convention)."""
    flat = np.concatenate([[0], mask.T.reshape(-1).astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(flat))
    return " ".join(f"{s + 1} {e - s}" for s, e in zip(edges[0::2], edges[1::2], strict=True))


def _blob(rng: np.random.Generator, height: int, width: int, empty: bool = False) -> np.ndarray:
    """A mask with one small rectangle (or none)."""
    mask = np.zeros((height, width), dtype=bool)
    if not empty:
        r, c = rng.integers(0, height - 3), rng.integers(0, width - 3)
        mask[r : r + rng.integers(2, 6), c : c + rng.integers(2, 6)] = True
    return mask


def _text_ids(n: int, prefix: str) -> list[str]:
    return [f"{prefix}{i:05d}" for i in range(n)]


def _contrails(rng, n):
    masks = [_blob(rng, 16, 12, empty=i % 3 == 0 and i > 0) for i in range(n)]
    ids = [int(v) for v in rng.choice(10**17, n, replace=False) + 10**17]
    answers = {
        "record_id": ids,
        "encoded_pixels": [_rle(m) or "-" for m in masks],
        "height": [16] * n,
        "width": [12] * n,
    }
    # MLE-bench's sample: the answers with "1 3 10 5" or "-" drawn at random.
    sample = {**answers, "encoded_pixels": [str(rng.choice(["1 3 10 5", "-"])) for _ in ids]}
    return Tables(answers, dict(answers), sample, 1.0)


def _hubmap(rng, n):
    ids = _text_ids(n, "kidney")
    shapes = [(int(rng.integers(20, 50)), int(rng.integers(20, 50))) for _ in ids]
    masks = [_blob(rng, h, w) for h, w in shapes]  # every test image has glomeruli
    answers = {
        "id": ids,
        "encoding": [_rle(m) for m in masks],
        "width_pixels": [w for _, w in shapes],
        "height_pixels": [h for h, _ in shapes],
    }
    perfect = {"id": ids, "predicted": answers["encoding"]}
    return Tables(answers, perfect, {"id": ids, "predicted": [""] * n}, 1.0)


def _salt(rng, n):
    ids = _text_ids(n, "salt")
    answers = {"id": ids, "rle_mask": [_rle(_blob(rng, 101, 101, i % 4 == 0)) for i in range(n)]}
    return Tables(answers, dict(answers), {"id": ids, "rle_mask": ["1 1"] * n}, 1.0)


def _ink(rng, n):
    ids = _text_ids(n, "fragment")
    shapes = [(int(rng.integers(20, 40)), int(rng.integers(20, 40))) for _ in ids]
    # The ink masks run along rows: the RLE of the transposed mask.
    runs = [_rle(_blob(rng, h, w).T) for h, w in shapes]
    answers = {
        "Id": ids,
        "Predicted": runs,
        "width": [w for _, w in shapes],
        "height": [h for h, _ in shapes],
    }
    perfect = {"Id": ids, "Predicted": runs}
    return Tables(answers, perfect, {"Id": ids, "Predicted": ["1 1 5 1"] * n}, 1.0)


def _gi_tract(rng, n):
    rows: dict[str, list] = {
        k: [] for k in ("id", "class", "predicted", "image_width", "image_height")
    }
    n_days = max(1, math.ceil(n / 12))  # four slices of three organs per case-day
    for day in range(n_days):
        height, width = int(rng.integers(10, 16)), int(rng.integers(10, 16))
        for s in range(1, 5):
            for organ in ("large_bowel", "small_bowel", "stomach"):
                rows["id"].append(f"case{day % 7 + 1}_day{day}_slice_{s:04d}")
                rows["class"].append(organ)
                rows["predicted"].append(
                    _rle(_blob(rng, height, width, rng.random() < 0.5)) or None
                )
                rows["image_width"].append(float(width))
                rows["image_height"].append(float(height))
    perfect = {k: rows[k] for k in ("id", "class", "predicted")}
    sample = {**perfect, "predicted": ["1 1 5 2"] * len(rows["id"])}
    return Tables(rows, perfect, sample, 1.0)


# --- boxes and points -----------------------------------------------------------------------------

_VINBIG_CLASSES = ["Aortic enlargement", "Atelectasis", "Calcification", "Cardiomegaly"]


def _vinbigdata(rng, n):
    images = _text_ids(n, "xray")
    found: list[tuple] = []  # (image, class_id, x_min, y_min, x_max, y_max)
    for image in images:
        if rng.random() < 0.3:
            found.append((image, 14, 0.0, 0.0, 1.0, 1.0))  # "No finding"
            continue
        classes = sorted(rng.choice(len(_VINBIG_CLASSES), rng.integers(1, 4), replace=False))
        for cid in classes:  # one box per class and image: no box can take another's match
            x, y = (float(v) for v in rng.integers(10, 900, 2))
            found.append((image, int(cid), x, y, x + float(rng.integers(20, 200)), y + 40.0))
    found.sort(key=lambda row: (row[0], row[1]))  # MLE-bench's answers follow (image, class)
    names = {14: "No finding", **dict(enumerate(_VINBIG_CLASSES))}
    answers = {
        "image_id": [r[0] for r in found],
        "class_name": [names[r[1]] for r in found],
        "class_id": [r[1] for r in found],
        "rad_id": ["R8"] * len(found),
        **{k: [r[i] for r in found] for i, k in enumerate(("x_min", "y_min", "x_max", "y_max"), 2)},
    }
    by_image: dict[str, list[str]] = {}
    for index, (image, cid, *box) in enumerate(found):
        # pycocotools never matches the answer box numbered 0, so its exact prediction is a
        # false positive; ranked last (confidence 0.5) it costs the least.
        confidence = 0.5 if index == 0 else 1.0
        by_image.setdefault(image, []).append(f"{cid} {confidence} " + " ".join(map(repr, box)))
    perfect = {"image_id": images, "PredictionString": [" ".join(by_image[i]) for i in images]}
    sample = {"image_id": images, "PredictionString": ["14 1 0 0 1 1"] * n}
    return Tables(answers, perfect, sample, _vinbigdata_best([r[1] for r in found]))


def _vinbigdata_best(class_ids: list[int]) -> float:
    """Mean AP at IoU 0.4 of the perfect submission: every class 1 except the class of the
    unmatchable first box, whose recall stops at (m-1)/m (COCO's 101-point interpolation)."""
    counts = {cid: class_ids.count(cid) for cid in set(class_ids)}
    m = counts[class_ids[0]]
    thresholds = np.linspace(0.0, 1.00, 101)
    first = 0.0 if m == 1 else float(np.sum(thresholds <= (m - 1) / m)) / 101
    return round((first + len(counts) - 1) / len(counts), 5)


def _siim(rng, n):
    studies = [f"{i}_study" for i in _text_ids(max(1, n // 2), "s")]
    images = [f"{i}_image" for i in _text_ids(max(1, n - len(studies)), "i")]
    labels = ["negative", "typical", "indeterminate", "atypical"]
    truth = [f"{rng.choice(labels)} 1 0 0 1 1" for _ in studies]
    for _ in images:
        boxes = [f"opacity 1 {x} 20 {x + 60} 90" for x in (10, 200)[: rng.integers(0, 3)]]
        truth.append(" ".join(boxes) or "none 1 0 0 1 1")
    ids = studies + images
    sample = ["negative 1 0 0 1 1"] * len(studies) + ["none 1 0 0 1 1"] * len(images)
    answers = {"id": ids, "PredictionString": truth}
    return Tables(answers, dict(answers), {"id": ids, "PredictionString": sample}, 1.0)


def _kuzushiji(rng, n):
    pages = _text_ids(n, "page")
    truth, centres = [], []
    for _ in pages:
        chars = [f"U+{int(c):04X}" for c in rng.integers(0x3042, 0x3094, rng.integers(0, 6))]
        # Characters side by side: every centre lies in its own box only.
        boxes = [(c, 100 * k + 5, 50, int(rng.integers(10, 60)), 40) for k, c in enumerate(chars)]
        truth.append(" ".join(f"{c} {x} {y} {w} {h}" for c, x, y, w, h in boxes) or None)
        centres.append(
            " ".join(f"{c} {x + w // 2} {y + h // 2}" for c, x, y, w, h in boxes) or None
        )
    sample = {"image_id": pages, "labels": ["U+003F 1 1 U+FF2F 2 2"] * n}
    return Tables(
        {"image_id": pages, "labels": truth}, {"image_id": pages, "labels": centres}, sample, 1.0
    )


def _lyft(rng, n):
    tokens = [f"{int(v):064x}" for v in rng.choice(2**62, n, replace=False)]
    truth = []
    for _ in tokens:
        boxes = []
        for k in range(int(rng.integers(1, 4))):  # 50 m apart: no two boxes overlap
            x, y = 1000.0 + 50 * k + float(rng.uniform(0, 5)), float(rng.uniform(1000, 2000))
            size = "1.9 4.6 1.7" if k % 2 else "2.6 10.2 3.4"
            yaw = float(rng.uniform(-3, 3))
            boxes.append(f"1.0 {x!r} {y!r} -18.5 {size} {yaw!r} {'car' if k % 2 else 'truck'}")
        truth.append(" ".join(boxes))
    answers = {"Id": tokens, "PredictionString": truth}
    return Tables(answers, dict(answers), {"Id": tokens, "PredictionString": [""] * n}, 1.0)


# --- sequences and text -----------------------------------------------------------------------------

_WORDS = np.array('the a cat sat on mat , . dog ran far away 1990 Ünïcödé " quoted text'.split())
_HINDI_TAMIL = np.array(["नई", "दिल्ली", "चेन्नई", "1947", "இந்தியா", "தலைநகரம்", "मुंबई"])


def _sentences(rng, n, vocabulary, low=3, high=12) -> list[str]:
    return [" ".join(rng.choice(vocabulary, rng.integers(low, high))) for _ in range(n)]


def _billion_word(rng, n):
    ids = list(range(1, n + 1))
    sentences = _sentences(rng, n, _WORDS)
    # The public test file (and so the sample) is each sentence with one word removed.
    holed = [" ".join(s.split()[:1] + s.split()[2:]) for s in sentences]
    return Tables(
        {"id": ids, "sentence": sentences},
        {"id": ids, "sentence": sentences},
        {"id": ids, "sentence": holed},
        0.0,
    )


def _bms(rng, n):
    ids = [f"{int(v):012x}" for v in rng.choice(16**12, n, replace=False)]
    inchi = [
        f"InChI=1S/C{rng.integers(1, 30)}H{rng.integers(1, 40)}O{rng.integers(0, 5)}/c1-2-{rng.integers(3, 9)}"
        for _ in ids
    ]
    sample = {"image_id": ids, "InChI": ["InChI=1S/H2O/h1H2"] * n}
    return Tables({"image_id": ids, "InChI": inchi}, {"image_id": ids, "InChI": inchi}, sample, 0.0)


def _gestures(rng, n):
    ids = list(range(300, 300 + n))
    sequences = [
        " ".join(str(int(g)) for g in rng.integers(1, 21, rng.integers(1, 10))) for _ in ids
    ]
    answers = {"Id": ids, "Sequence": sequences}
    return Tables(answers, dict(answers), {"Id": ids, "Sequence": ["1 2 3"] * n}, 0.0)


def _word_spans(id_column, target, vocabulary, prefix):
    def build(rng, n):
        ids = _text_ids(n, prefix)
        spans = _sentences(rng, n, vocabulary, 1, 5)  # never empty: both-empty rows fail
        answers = {id_column: ids, target: spans}
        sample = {id_column: ids, target: [str(vocabulary[0])] * n}
        return Tables(answers, dict(answers), sample, 1.0)

    return build


def _notebooks(rng, n):
    ids = [f"{int(v):014x}" for v in rng.choice(16**14, n, replace=False)]
    orders = [
        [f"{int(c):08x}" for c in rng.choice(16**8, rng.integers(2, 12), replace=False)]
        for _ in ids
    ]
    perfect = {"id": ids, "cell_order": [" ".join(o) for o in orders]}
    sample = {"id": ids, "cell_order": [" ".join(rng.permutation(o)) for o in orders]}
    return Tables(dict(perfect), perfect, sample, 1.0)


def _natural_questions(rng, n):
    """JSONL answers; per example a ``_long`` and a ``_short`` row, answered exactly."""
    import json

    lines, ids, perfect = [], [], []
    for i in range(max(1, n // 2)):
        kind, start = int(rng.integers(4)), int(rng.integers(0, 500))
        long_answer = (-1, -1) if kind == 0 else (start, start + 80)
        short = [] if kind in (0, 3) else [{"start_token": start + 5, "end_token": start + 7}]
        annotation = {
            "long_answer": {"start_token": long_answer[0], "end_token": long_answer[1]},
            "short_answers": short,
            "yes_no_answer": "YES" if kind == 3 else "NONE",
        }
        example = f"-{7000000000000000000 + i}"
        lines.append(json.dumps({"example_id": example, "annotations": [annotation]}))
        ids += [f"{example}_long", f"{example}_short"]
        perfect.append("" if kind == 0 else f"{long_answer[0]}:{long_answer[1]}")
        perfect.append("YES" if kind == 3 else f"{start + 5}:{start + 7}" if short else "")
    sample = {"example_id": ids, "PredictionString": [""] * len(ids)}
    text = "\n".join(lines) + "\n"
    return Tables(text, {"example_id": ids, "PredictionString": perfect}, sample, 1.0)


COMPLEX_BUILDERS: dict[str, Callable[[np.random.Generator, int], Tables]] = {
    "google-research-identify-contrails-reduce-global-warming": _contrails,
    "hubmap-kidney-segmentation": _hubmap,
    "tgs-salt-identification-challenge": _salt,
    "vesuvius-challenge-ink-detection": _ink,
    "uw-madison-gi-tract-image-segmentation": _gi_tract,
    "vinbigdata-chest-xray-abnormalities-detection": _vinbigdata,
    "siim-covid19-detection": _siim,
    "kuzushiji-recognition": _kuzushiji,
    "3d-object-detection-for-autonomous-vehicles": _lyft,
    "billion-word-imputation": _billion_word,
    "bms-molecular-translation": _bms,
    "multi-modal-gesture-recognition": _gestures,
    "chaii-hindi-and-tamil-question-answering": _word_spans(
        "id", "PredictionString", _HINDI_TAMIL, "q"
    ),
    "tweet-sentiment-extraction": _word_spans("textID", "selected_text", _WORDS, "tw"),
    "AI4Code": _notebooks,
    "tensorflow2-question-answering": _natural_questions,
}
