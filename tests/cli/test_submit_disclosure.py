"""``mleboard submit``'s conditions: ``--disclosure FILE.yaml`` and one flag per field,
checked here with the site's own rules (a mistake is a usage error, exit 2, naming the
field), and the class the dry run says the experiment will be in."""

from __future__ import annotations

import json

from cli.main import main


def group(tmp_path, disclosure_yaml: bytes | None = None):
    folder = tmp_path / "2024-10-01T00-00-00-GMT_run-group_x"
    run = folder / "demo-wine_00000000-0000-0000-0000-000000000000"
    (run / "submission").mkdir(parents=True)
    (run / "submission" / "submission.csv").write_text("id,target\n1,0\n")
    (folder / "metadata.json").write_text(json.dumps({"runs": {run.name: {}}}))
    if disclosure_yaml is not None:
        (tmp_path / "conditions.yaml").write_bytes(disclosure_yaml)
    return folder


def submit(folder, *extra: str) -> int:
    argv = ["submit", str(folder), "--site", "http://127.0.0.1:9", "--scaffold", "s"]
    return main([*argv, "--model", "m", "--dry-run", *extra])


def test_the_file_and_the_flags_make_the_conditions_flags_winning(tmp_path, capsys):
    folder = group(tmp_path, b"gpus: 2\ngpu_model: H100 80GB\nhours: 24\nmodels: [a, b]\n")
    code = submit(
        folder, "--disclosure", str(tmp_path / "conditions.yaml"), "--gpus", "1", "--seeds", "1"
    )
    out = capsys.readouterr().out
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith("Conditions:"))
    assert line.startswith("Conditions: beyond (GPU beyond an A10 24 GB (H100 80GB), ")
    assert "ensemble of 2 models" in line and "1 seed" in line and "2 GPUs" not in line
    assert "not disclosed: vCPUs, RAM" in line and "publishing needs: vCPUs" in line


def test_without_conditions_the_dry_run_says_they_are_not_disclosed(tmp_path, capsys):
    assert submit(group(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "Conditions: undisclosed; not disclosed: GPUs, vCPUs, RAM, hours, models" in out


def test_a_bad_flag_or_file_is_a_usage_error_naming_the_field(tmp_path, capsys):
    folder = group(tmp_path, b"gpus: [1\n")
    assert submit(folder, "--vcpus", "many") == 2
    assert "vcpus: must be a whole number of vCPUs" in capsys.readouterr().err
    assert submit(folder, "--disclosure", str(tmp_path / "conditions.yaml")) == 2
    assert "conditions.yaml: is not valid YAML or JSON (line " in capsys.readouterr().err
    assert submit(folder, "--disclosure", str(tmp_path / "absent.yaml")) == 2
    assert "cannot read --disclosure" in capsys.readouterr().err
    assert submit(folder, "--selection", "best-of-1") == 2
    assert "selection: must be pass@1 or best-of-K" in capsys.readouterr().err
