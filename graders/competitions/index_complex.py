"""Competitions graded by complex metrics (masks, boxes, sequences, text), owned by graders-complex.

Map each competition id to the module under ``graders/competitions/`` whose ``GRADERS`` dict
holds its grader, e.g. ``"tgs-salt-identification-challenge": "graders.competitions.masks"``.
See the docstring of ``graders.registry`` for the steps.
"""

_MASKS = "graders.competitions.masks"
_TEXT_EDITS = "graders.competitions.text_edits"
_TEXT_SPANS = "graders.competitions.text_spans"
_BOXES = "graders.competitions.boxes"

COMPLEX_GRADER_MODULES: dict[str, str] = {
    # run-length encoded masks
    "google-research-identify-contrails-reduce-global-warming": _MASKS,
    "hubmap-kidney-segmentation": _MASKS,
    "tgs-salt-identification-challenge": _MASKS,
    "vesuvius-challenge-ink-detection": _MASKS,
    "uw-madison-gi-tract-image-segmentation": "graders.competitions.gi_tract",
    # boxes and points
    "vinbigdata-chest-xray-abnormalities-detection": _BOXES,
    "siim-covid19-detection": _BOXES,
    "kuzushiji-recognition": "graders.competitions.kuzushiji_points",
    "3d-object-detection-for-autonomous-vehicles": "graders.competitions.lyft_3d",
    # sequences and text
    "billion-word-imputation": _TEXT_EDITS,
    "bms-molecular-translation": _TEXT_EDITS,
    "multi-modal-gesture-recognition": _TEXT_EDITS,
    "chaii-hindi-and-tamil-question-answering": _TEXT_SPANS,
    "tweet-sentiment-extraction": _TEXT_SPANS,
    "AI4Code": "graders.competitions.notebook_order",
}
