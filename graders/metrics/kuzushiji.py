"""Kuzushiji recognition's point-in-box F1.

Each true character is a box ``label x y width height``; each prediction a point
``label x y``. Going through a page's boxes in order, a box is found (true positive) when an
unused prediction with the same label lies strictly inside it; the lowest-numbered such
prediction is used up. Unfound boxes are false negatives, unused predictions false positives.
Counts are pooled over all pages before the F1.

Candidate (box, prediction) pairs are found for all pages at once with a join on
(page, label); the greedy order only matters where one prediction lies in several boxes of its
label, and only those few groups are walked one box at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from graders.metrics.tokens import parse_floats


class MalformedLabels(ValueError):
    """A page string that does not split into whole groups of numbers."""

    def __init__(self, row: int, reason: str) -> None:
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


@dataclass(frozen=True)
class PageItems:
    """Characters of all pages: page index, label and numbers, one entry per character."""

    page: np.ndarray  # int64
    label: np.ndarray  # str (object)
    numbers: np.ndarray  # float64, shape (n, k): x y (points) or x y width height (boxes)


def parse_pages(pages: Sequence[object], group: int) -> PageItems:
    """Split ``label n1 n2 ...`` strings (single-space separated) into items of ``group`` tokens.

    ``None``/NaN pages have no items. Raises ``MalformedLabels`` when a page's token count is
    not a multiple of ``group`` or a number does not parse.
    """
    tokens: list[list[str]] = []
    for row, page in enumerate(pages):
        if page is None or (isinstance(page, float) and np.isnan(page)):
            tokens.append([])
            continue
        if not isinstance(page, str):
            raise MalformedLabels(row, f"expected text, got {page!r}")
        # MLE-bench splits on single spaces: a double space makes an empty token.
        parts = page.split(" ")
        if len(parts) % group:
            raise MalformedLabels(row, f"expected groups of {group} values, got {len(parts)}")
        tokens.append(parts)
    counts = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)) // group
    flat = np.array([t for parts in tokens for t in parts], dtype=object).reshape(-1, group)
    try:
        numbers = parse_floats(flat[:, 1:])
    except ValueError:
        for row, parts in enumerate(tokens):  # only on failure: name the row
            for i, token in enumerate(parts):
                if i % group:
                    try:
                        float(token)
                    except ValueError:
                        raise MalformedLabels(row, f"'{token}' is not a number") from None
        raise
    page_index = np.repeat(np.arange(len(tokens), dtype=np.int64), counts)
    return PageItems(page=page_index, label=flat[:, 0], numbers=numbers.reshape(-1, group - 1))


def point_in_box_counts(boxes: PageItems, points: PageItems) -> tuple[int, int, int]:
    """(true positives, false positives, false negatives) pooled over all pages."""
    n_boxes, n_points = len(boxes.page), len(points.page)
    if n_boxes == 0 or n_points == 0:
        return 0, n_points, n_boxes
    box_table = pd.DataFrame({"page": boxes.page, "label": boxes.label, "box": np.arange(n_boxes)})
    point_table = pd.DataFrame(
        {"page": points.page, "label": points.label, "point": np.arange(n_points)}
    )
    pairs = box_table.merge(point_table, on=["page", "label"], how="inner")
    box = pairs["box"].to_numpy(np.int64)
    point = pairs["point"].to_numpy(np.int64)
    x_min, y_min = boxes.numbers[box, 0], boxes.numbers[box, 1]
    x_max = x_min + boxes.numbers[box, 2]
    y_max = y_min + boxes.numbers[box, 3]
    x, y = points.numbers[point, 0], points.numbers[point, 1]
    inside = (x_min < x) & (x_max > x) & (y_min < y) & (y_max > y)
    box, point = box[inside], point[inside]
    order = np.lexsort((point, box))  # by box, then lowest prediction first
    box, point = box[order], point[order]

    # A prediction inside a single box cannot be contested: those boxes simply take their
    # lowest candidate. Boxes sharing a candidate with another box are matched greedily.
    shared_points = np.flatnonzero(np.bincount(point, minlength=n_points) > 1)
    contested_boxes = np.unique(box[np.isin(point, shared_points)])
    # Every box of a (page, label) group touching a contested box joins the greedy walk.
    group_key = pd.factorize(pd.MultiIndex.from_arrays([boxes.page, boxes.label]))[0]
    contested_groups = np.unique(group_key[contested_boxes])
    in_contested = np.isin(group_key[box], contested_groups)

    simple_boxes = np.unique(box[~in_contested])
    matched = len(simple_boxes)
    matched += _greedy_matches(box[in_contested], point[in_contested])
    tp = matched
    return tp, n_points - tp, n_boxes - tp


def _greedy_matches(box: np.ndarray, point: np.ndarray) -> int:
    """Walk boxes in order; each takes its lowest unused candidate. Pairs sorted by box, point."""
    if len(box) == 0:
        return 0
    used: set[int] = set()
    matches = 0
    boundaries = np.flatnonzero(np.diff(box)) + 1
    for candidates in np.split(point, boundaries):
        for candidate in candidates.tolist():
            if candidate not in used:
                used.add(candidate)
                matches += 1
                break
    return matches


def kuzushiji_f1(truth_pages: Sequence[object], predicted_pages: Sequence[object]) -> float:
    """Micro F1 of point-in-box matching over all pages; 0 when precision or recall is 0."""
    boxes = parse_pages(truth_pages, 5)
    points = parse_pages(predicted_pages, 3)
    tp, fp, fn = point_in_box_counts(boxes, points)
    if tp + fp == 0 or tp + fn == 0:
        return 0.0
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    if precision > 0 and recall > 0:
        return (2 * precision * recall) / (precision + recall)
    return 0.0
