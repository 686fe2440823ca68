"""Every competition has exactly one grader, and the index agrees with the modules."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import graders
from graders.registry import grader_modules
from tests.support.synthetic import DEMO_IDS, REPO_ROOT


def test_every_catalogue_competition_has_a_grader(catalogue_entries):
    known = set(graders.known_competitions())
    expected = {entry["id"] for entry in catalogue_entries} | set(DEMO_IDS)
    missing = sorted(expected - known)
    assert not missing, f"competitions without a grader: {missing}"
    assert known == expected, f"graders for unknown competitions: {sorted(known - expected)}"


def test_index_agrees_with_grader_modules():
    for competition_id, module_path in grader_modules().items():
        module = importlib.import_module(module_path)
        grader = module.GRADERS.get(competition_id)
        assert grader is not None, f"{module_path}.GRADERS lacks {competition_id}"
        assert grader.competition_id == competition_id
    by_module: dict[str, set[str]] = {}
    for competition_id, module_path in grader_modules().items():
        by_module.setdefault(module_path, set()).add(competition_id)
    for module_path, ids in by_module.items():
        extra = set(importlib.import_module(module_path).GRADERS) - ids
        assert not extra, f"{module_path} defines graders not in the index: {sorted(extra)}"


def test_answers_paths_match_the_catalogue(catalogue_by_id):
    for competition_id in graders.known_competitions():
        if competition_id in DEMO_IDS:
            continue
        grader = graders.grader_for(competition_id)
        assert grader.answers == catalogue_by_id[competition_id]["answers"], competition_id


def test_grader_versions_name_the_catalogue_metric(catalogue_by_id):
    for competition_id in graders.known_competitions():
        grader = graders.grader_for(competition_id)
        metric, _, revision = grader.grader_version.partition("/")
        assert revision.isdigit()
        if competition_id in catalogue_by_id:
            assert metric == catalogue_by_id[competition_id]["metric"], competition_id
        assert all(isinstance(q, str) and q for q in grader.quirks)


def test_unknown_competition_raises():
    with pytest.raises(graders.UnknownCompetition, match="no-such-competition"):
        graders.grader_for("no-such-competition")


def test_import_is_light():
    code = (
        "import sys, graders; "
        "heavy = [m for m in ('pandas', 'sklearn', 'scipy', 'pyarrow', 'numpy') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""
