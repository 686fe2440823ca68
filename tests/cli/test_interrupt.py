"""Ctrl-C while ``mleboard`` loads (its parser, a command's libraries) ends it with one line
and exit code 130, never a traceback. The interrupt is sent by the process itself as it
starts importing a given module (an import hook in a ``sitecustomize`` of the test's), so
each point of the start-up is hit exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

# Loaded in this order by `mleboard submit --dry-run --data-dir`: the parser, the
# configuration, the upload command, its layout readers, then the graders.
POINTS = ("cli.main", "config.variables", "cli.submit", "benchmark.upload_layout", "graders.core")

HOOK = '''
import os, signal, sys

class _InterruptAt:
    """Ctrl-C, as the terminal sends it, when the module named by MLEBOARD_INTERRUPT_AT is
    first looked for."""

    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("MLEBOARD_INTERRUPT_AT"):
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, _InterruptAt())
'''


@pytest.fixture
def run_group(tmp_path):
    group = tmp_path / "2024-10-01T00-00-00-GMT_run-group_linear"
    run = group / "demo-wine_00000000-0000-0000-0000-000000000000"
    (run / "submission").mkdir(parents=True)
    (run / "submission" / "submission.csv").write_text("id,class_0\n0,1\n")
    (group / "metadata.json").write_text(json.dumps({"runs": {run.name: {"success": True}}}))
    return group


@pytest.mark.parametrize("program", ["console script", "python -m cli"])
@pytest.mark.parametrize("point", POINTS)
def test_ctrl_c_while_loading_ends_with_one_line_and_130(tmp_path, run_group, point, program):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    start = (
        [str(Path(sys.executable).parent / "mleboard")]
        if program == "console script"
        else [sys.executable, "-m", "cli"]
    )
    done = subprocess.run(
        [
            *start,
            "submit",
            str(run_group),
            "--site",
            "http://127.0.0.1:9",
            "--scaffold",
            "s",
            "--model",
            "m",
            "--dry-run",
            "--data-dir",
            str(tmp_path / "data"),
        ],
        cwd=REPO_ROOT,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(hook), str(REPO_ROOT)]),
            "MLEBOARD_INTERRUPT_AT": point,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (130, "mleboard: interrupted\n"), done.stderr
