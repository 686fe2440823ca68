"""The house rules (``tools/house_rules``) in the suite: each rule sees its bad examples
and passes its good ones, and the tree keeps it, so a broken rule is a failing test."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest

from tools.house_rules import finders
from tools.house_rules.engine import ROOT, Files, Rule, check
from tools.house_rules.rules import RULES

IDS = [rule.name for rule in RULES]


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_the_rule_sees_what_it_bans(rule):
    assert rule.example_failures() == []


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_the_tree_keeps_the_rule(rule):
    assert check(rule) == []


def test_the_rules_have_names_of_their_own():
    assert len(set(IDS)) == len(IDS) and all(re.fullmatch(r"[a-z-]+", name) for name in IDS)


def test_the_engine_refuses_a_rule_that_sees_nothing():
    blind = Rule(
        name="blind",
        why="a pattern that cannot match",
        files=Files(roots=("webapp",)),
        pattern=re.compile(r"(?!)"),
        bad=("print(x)\n",),
        good=("x = 1\n",),
    )
    assert blind.example_failures() == [
        "its files do not cover its examples' path example.py",
        "does not see the bad example 'print(x)\\n'",
    ]
    covered = dataclasses.replace(blind, example_path="webapp/example.py")
    assert covered.example_failures() == ["does not see the bad example 'print(x)\\n'"]


def test_an_allowed_place_that_is_gone_is_a_problem(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    rule = Rule(
        name="no-y",
        why="no y",
        files=Files(roots=("pkg",)),
        pattern=re.compile(r"\by\b"),
        allowed={("pkg/a.py", "y = 2"): "kept for a reason"},
        bad=("y = 1\n",),
        good=("x = 1\n",),
        example_path="pkg/example.py",
    )
    assert check(rule, tmp_path) == [
        "no-y: allowed but gone (remove from the rule): [('pkg/a.py', 'y = 2')]"
    ]
    (tmp_path / "pkg" / "a.py").write_text("y = 2\ny = 3\n")
    problems = check(rule, tmp_path)
    assert len(problems) == 1 and "pkg/a.py:2: y = 3" in problems[0]


def test_each_history_phrase_has_an_example():
    rule = next(rule for rule in RULES if rule.name == "history-in-comments")
    for phrase in finders.HISTORY_PHRASES:
        assert any(re.search(phrase, text, re.IGNORECASE) for text in rule.bad), phrase


def test_the_module_docstring_is_measured_in_lines():
    assert finders.module_docstring_lines('"""' + "\n".join(["A line."] * 12) + '"""\n') == 12
    assert finders.module_docstring_lines('"""One line."""\nx = 1\n') == 1
    assert finders.module_docstring_lines("x = 1\n") == 0


def test_the_command_runs_every_rule():
    done = subprocess.run(
        [sys.executable, "-m", "tools.house_rules"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert f"house rules: {len(RULES)} checked, 0 problem(s)" in done.stdout


def test_ruff_bans_html_marked_safe_in_python():
    """``mark_safe`` on a string built in Python skips the escaping a template gives every
    value: ruff's banned-api (TID251, pyproject.toml) refuses it; render a template."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--stdin-filename", "webapp/x.py", "-"],
        cwd=ROOT,
        input="from django.utils.safestring import mark_safe\n\nmark_safe('<b>x</b>')\n",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "TID251" in done.stdout, done.stdout + done.stderr
