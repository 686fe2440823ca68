"""The site ``mleboard login`` was given is remembered: ``mleboard submit`` needs no
``--site`` after it, and says what to do when there is none."""

from __future__ import annotations

import json

import pytest

from cli.main import main
from cli.site_api import save_site


@pytest.fixture
def config_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("MLEBOARD_TOKEN", raising=False)
    return tmp_path / "config"


def dry_run(tmp_path, *extra: str) -> list[str]:
    """``mleboard submit --dry-run`` of a run group with one run."""
    group = tmp_path / "2024-10-01T00-00-00-GMT_run-group_linear"
    run = group / "demo-wine_00000000-0000-0000-0000-000000000000"
    (run / "submission").mkdir(parents=True, exist_ok=True)
    (run / "submission" / "submission.csv").write_text("id,class_0\n0,1\n")
    (group / "metadata.json").write_text(json.dumps({"runs": {run.name: {"success": True}}}))
    return ["submit", str(group), "--scaffold", "s", "--model", "m", "--dry-run", *extra]


def test_without_site_and_none_remembered_it_says_how_to_give_one(tmp_path, capsys, config_home):
    assert main(dry_run(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "say which site: --site URL" in err and "mleboard login --site URL" in err


def test_the_site_login_was_given_is_used_when_none_is_given(tmp_path, capsys, config_home):
    save_site("http://mleboard.example.org")
    assert main(dry_run(tmp_path)) == 0
    assert " to http://mleboard.example.org\n" in capsys.readouterr().out
    # Given, --site wins over the remembered one.
    assert main(dry_run(tmp_path, "--site", "http://other.example.org/")) == 0
    assert " to http://other.example.org\n" in capsys.readouterr().out
