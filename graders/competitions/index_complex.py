"""Competitions graded by complex metrics (masks, boxes, sequences, text), owned by graders-complex.

Map each competition id to the module under ``graders/competitions/`` whose ``GRADERS`` dict
holds its grader, e.g. ``"tgs-salt-identification-challenge": "graders.competitions.masks"``.
See the docstring of ``graders.registry`` for the steps.
"""

COMPLEX_GRADER_MODULES: dict[str, str] = {}
