"""``mleboard similarity`` and ``mleboard integrity``."""

from __future__ import annotations

import json

from cli import main as cli
from tests.support.integrity_corpus import REFERENCE, UNRELATED, renamed


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_both_commands_are_registered():
    commands = cli.build_parser()._subparsers._group_actions[0].choices
    assert {"similarity", "integrity"} <= set(commands)


def _folders(tmp_path):
    refs, subs = tmp_path / "refs", tmp_path / "subs"
    (refs / "nb").mkdir(parents=True)
    subs.mkdir()
    (refs / "nb" / "solution.py").write_text(REFERENCE)
    (refs / "other.py").write_text(UNRELATED)
    (refs / "README.md").write_text("not code")
    (subs / "main.py").write_text(renamed(REFERENCE))
    return refs, subs


def test_similarity_json(tmp_path, capsys):
    refs, subs = _folders(tmp_path)
    code, out, _ = run_main(
        capsys, "similarity", "--references", str(refs), "--submissions", str(subs)
    )
    assert code == 0
    [pair] = json.loads(out)
    assert pair["submission"] == "main.py" and pair["reference"] == "nb/solution.py"
    assert 0.6 <= pair["similarity"] <= 1.0
    assert pair["fragments"][0]["a_lines"][0] == 1 and len(pair["fragments"][0]["b_lines"]) == 2


def test_similarity_threshold_zero_lists_every_pair_as_text(tmp_path, capsys):
    refs, subs = _folders(tmp_path)
    code, out, _ = run_main(
        capsys,
        "similarity",
        "--references",
        str(refs),
        "--submissions",
        str(subs),
        "--threshold",
        "0",
        "--format",
        "text",
    )
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].split()[1:3] == ["main.py", "nb/solution.py"]
    assert lines[1].split()[1:3] == ["main.py", "other.py"] and float(lines[1].split()[0]) < 0.2
    assert lines[-1].startswith("2 pairs at or above 0")


def test_similarity_usage_errors(tmp_path, capsys):
    code, _, err = run_main(
        capsys, "similarity", "--references", str(tmp_path / "none"), "--submissions", str(tmp_path)
    )
    assert code == 2 and "is not a folder" in err
    code, _, err = run_main(
        capsys,
        "similarity",
        "--references",
        str(tmp_path),
        "--submissions",
        str(tmp_path),
        "--threshold",
        "2",
    )
    assert code == 2 and "between 0 and 1" in err


def test_integrity_prints_findings(tmp_path, capsys):
    (tmp_path / "code").mkdir()
    (tmp_path / "logs").mkdir()
    (tmp_path / "code" / "a.py").write_text("import openai\nimport pandas as pd\n")
    (tmp_path / "logs" / "run.log").write_text("ok\n$ kaggle competitions download -c x\n")
    code, out, _ = run_main(capsys, "integrity", str(tmp_path), "--format", "json")
    assert code == 0
    assert [(f["check"], f["file"], f["line"]) for f in json.loads(out)] == [
        ("external_llm", "code/a.py", 1),
        ("unauthorized_resource", "logs/run.log", 2),
    ]
    code, out, _ = run_main(capsys, "integrity", str(tmp_path))
    assert "code/a.py:1" in out and out.strip().endswith("2 findings")
    code, _, err = run_main(capsys, "integrity", str(tmp_path / "missing"))
    assert code == 2 and "is not a folder" in err
