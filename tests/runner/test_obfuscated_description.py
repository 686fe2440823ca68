"""Runs on MLE-bench's obfuscated descriptions: the agent reads the obfuscated text as
``description.md``, the rest of the public folder unchanged, and instructions that do not
name Kaggle; on both backends, without touching the public folder itself."""

from __future__ import annotations

from pathlib import Path

from runner import Outcome, run_agent
from tests.support.run_specs import docker_spec, local_spec

OBFUSCATED = "# A tabular task\nPredict the target column from the others.\n"
READER = (
    "import os, pathlib\n"
    "data = pathlib.Path(os.environ['DATA_DIR'])\n"
    "print('DESCRIPTION', (data / 'description.md').read_text().splitlines()[0])\n"
    "print('FILES', sorted(p.name for p in data.iterdir()))\n"
    "text = pathlib.Path(os.environ['INSTRUCTIONS_FILE']).read_text()\n"
    "print('KAGGLE' if 'Kaggle' in text else 'NO-KAGGLE')\n"
)


def _read(outcome) -> str:
    assert outcome.outcome is Outcome.COMPLETED, outcome.logs_path.read_text()
    return outcome.logs_path.read_text()


def _public(demo_data: Path, competition: str) -> Path:
    return demo_data / competition / "prepared" / "public"


def test_local_run_reads_the_obfuscated_description(demo_data, tmp_path):
    spec = local_spec(READER, obfuscated_description=OBFUSCATED)
    public = _public(demo_data, spec.competition_id)
    before = (public / "description.md").read_text()
    log = _read(run_agent(spec, data_dir=demo_data, output_dir=tmp_path / "o", backend="local"))
    assert "DESCRIPTION # A tabular task" in log
    assert "NO-KAGGLE" in log
    assert str(sorted(p.name for p in public.iterdir())) in log
    assert (public / "description.md").read_text() == before


def test_local_run_without_it_reads_the_original(demo_data, tmp_path):
    spec = local_spec(READER)
    public = _public(demo_data, spec.competition_id)
    first = (public / "description.md").read_text().splitlines()[0]
    log = _read(run_agent(spec, data_dir=demo_data, output_dir=tmp_path / "o", backend="local"))
    assert f"DESCRIPTION {first}" in log and "| KAGGLE" in log


def test_container_reads_the_obfuscated_description(base_image, demo_data, tmp_path):
    code = READER.replace("os.environ['DATA_DIR']", "'/home/data'")
    spec = docker_spec(base_image, code, obfuscated_description=OBFUSCATED)
    public = _public(demo_data, spec.competition_id)
    log = _read(run_agent(spec, data_dir=demo_data, output_dir=tmp_path / "o", backend="docker"))
    assert "DESCRIPTION # A tabular task" in log and "NO-KAGGLE" in log
    assert str(sorted(p.name for p in public.iterdir())) in log
