"""Run AIDE 0.1.4 on the competition in /home/data, as MLE-bench runs it.

AIDE's command line draws a full-screen UI, cannot read its task file in 0.1.4 and keeps
its best submission nowhere, so this driver uses its library with MLE-bench's settings and
task text. The search runs until ``AIDE_STEPS`` steps or the time limit; after every step
AIDE's ``journal.json`` goes to ``$LOGS_DIR``, and each new best node's ``submission.csv``
(validated) to ``$SUBMISSION_DIR`` and its code to ``$CODE_DIR``. The endpoint is the
operator's (``OPENAI_BASE_URL``/``OPENAI_API_KEY``, read once and removed from the scripts'
environment); every model name goes to it (AIDE would send a name without ``gpt-`` to
Anthropic's client). ``MLEBOARD_LLM_MODEL``, when set, replaces both models.
"""

from __future__ import annotations

import logging
import os
import shutil
import string
import subprocess
import sys
import time
from pathlib import Path

from aide import backend
from aide.agent import Agent
from aide.backend import backend_openai
from aide.interpreter import Interpreter
from aide.journal import Journal
from aide.utils.config import _load_cfg, prep_agent_workspace, prep_cfg, save_run
from omegaconf import OmegaConf
from openai import OpenAI

AGENT_DIR = Path(os.environ.get("AGENT_DIR", Path(__file__).resolve().parent))
DATA_DIR = Path(os.environ.get("DATA_DIR", "/home/data"))
SUBMISSION_DIR = Path(os.environ.get("SUBMISSION_DIR", "/home/submission"))
LOGS_DIR = Path(os.environ.get("LOGS_DIR", "/home/logs"))
CODE_DIR = Path(os.environ.get("CODE_DIR", "/home/code"))
INSTRUCTIONS = Path(os.environ.get("INSTRUCTIONS_FILE", "/home/instructions.txt"))
VALIDATE_SCRIPT = os.environ.get("VALIDATE_SCRIPT", "/home/validate_submission.sh")
TIME_LIMIT_S = int(os.environ.get("TIME_LIMIT_SECS", "86400"))
STEPS = int(os.environ.get("AIDE_STEPS", "500"))
# MLE-bench's: at most 9 hours per script, debug every buggy leaf, up to 20 levels deep.
EXEC_TIMEOUT_S = int(os.environ.get("AIDE_EXEC_TIMEOUT", "32400"))
# Stop starting steps this long before the deadline (the harness kills at the deadline).
MARGIN_S = float(os.environ.get("AIDE_MARGIN_SECS", "30"))

log = logging.getLogger("run_aide")


def hardware() -> str:
    try:
        names = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.split("\n")
        gpus = [n.strip() for n in names if n.strip()]
    except (OSError, subprocess.SubprocessError):
        gpus = []
    return ", ".join(f"{gpus.count(n)} {n}" for n in dict.fromkeys(gpus)) or "a CPU"


def task_text() -> str:
    secs = TIME_LIMIT_S
    notes = string.Template((AGENT_DIR / "additional_notes.txt").read_text()).safe_substitute(
        HARDWARE=hardware(),
        TIME_LIMIT=f"{secs // 3600}hrs {(secs % 3600) // 60}mins {secs % 60}secs",
        STEPS=STEPS,
    )
    description = DATA_DIR / "description.md"
    return "\n".join(
        [
            INSTRUCTIONS.read_text().replace("/home/", ""),
            notes,
            "COMPETITION INSTRUCTIONS\n------\n",
            description.read_text() if description.is_file() else "",
        ]
    )


def validate(path: Path) -> str:
    try:
        done = subprocess.run(
            [VALIDATE_SCRIPT, str(path)], capture_output=True, text=True, timeout=300
        )
        return (done.stdout or done.stderr).strip()[:500]
    except (OSError, subprocess.SubprocessError) as exc:
        return f"validation unavailable: {exc}"


def main() -> int:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stdout,
        force=True,  # aide.utils.config configured logging at import, at WARNING
    )
    logging.getLogger("aide").setLevel(logging.INFO)
    for noisy in ("httpx", "openai", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    started = time.monotonic()
    deadline = started + TIME_LIMIT_S - MARGIN_S
    # Every model through the OpenAI-compatible endpoint, with a client made here: the key
    # and endpoint then leave the environment, so the scripts AIDE runs never see them.
    backend.backend_anthropic.query = backend_openai.query
    backend_openai._client = OpenAI(
        api_key=os.environ.pop("OPENAI_API_KEY", ""),
        base_url=os.environ.pop("OPENAI_BASE_URL", None),
        max_retries=3,
    )
    backend_openai._setup_openai_client = lambda: None
    model = os.environ.get("MLEBOARD_LLM_MODEL", "").strip()

    work = Path(os.environ.get("HOME", "/tmp/home")) / "aide"
    cfg = _load_cfg(use_cli_args=False)
    cfg.data_dir = str(DATA_DIR)
    cfg.goal = "see the task description"
    cfg.log_dir = str(work / "logs")
    cfg.workspace_dir = str(work / "workspaces")
    cfg.exp_name = "exp"
    cfg.copy_data = False
    cfg.agent.steps = STEPS
    cfg.agent.code.model = model or os.environ.get("AIDE_CODE_MODEL", "gpt-4o-2024-08-06")
    cfg.agent.feedback.model = model or os.environ.get("AIDE_FEEDBACK_MODEL", cfg.agent.code.model)
    cfg.agent.search.max_debug_depth = 20
    cfg.agent.search.debug_prob = 1.0
    cfg.exec.timeout = EXEC_TIMEOUT_S
    cfg = prep_cfg(cfg)
    cfg.log_dir = LOGS_DIR  # journal.json and the rest where the harness keeps them

    log.info("preparing the workspace %s", cfg.workspace_dir)
    prep_agent_workspace(cfg)
    journal = Journal()
    agent = Agent(task_desc=task_text(), cfg=cfg, journal=journal)
    interpreter = Interpreter(cfg.workspace_dir, **OmegaConf.to_container(cfg.exec))
    working = Path(cfg.workspace_dir) / "working"
    best_id = None
    try:
        while len(journal) < STEPS:
            left = deadline - time.monotonic()
            if left <= 0:
                log.info("time is up after %d steps", len(journal))
                break
            interpreter.timeout = int(max(10, min(EXEC_TIMEOUT_S, left)))
            (working / "submission.csv").unlink(missing_ok=True)
            agent.step(exec_callback=interpreter.run)
            save_run(cfg, journal)
            node = journal.nodes[-1]
            state = "buggy" if node.is_buggy else f"metric {node.metric.value}"
            log.info("step %d: node %s, %s", len(journal), node.id, state)
            best = journal.get_best_node(only_good=True)
            if best is not None and best.id != best_id and best is node:
                best_id = best.id
                CODE_DIR.mkdir(parents=True, exist_ok=True)
                (CODE_DIR / "solution.py").write_text(best.code)
                produced = working / "submission.csv"
                if produced.is_file():
                    SUBMISSION_DIR.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(produced, SUBMISSION_DIR / "submission.csv")
                    log.info("new best node %s: submission kept (%s)", node.id, validate(produced))
                else:
                    log.info("new best node %s wrote no submission.csv", node.id)
    finally:
        interpreter.cleanup_session()
    log.info("done: %d steps in %.0fs", len(journal), time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
