import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from webapp.results.imports.reports import RunsFolderError, import_runs_folder


class Command(BaseCommand):
    help = (
        "Load MLE-bench grading reports from a runs/ folder (one folder per run group) into "
        "experiments, stored as reported. --experiments maps experiment ids to run groups "
        "like MLE-bench's runs/run_group_experiments.csv."
    )

    def add_arguments(self, parser):
        parser.add_argument("runs_dir", type=Path)
        parser.add_argument(
            "--experiments", type=Path, default=None, help="run_group_experiments.csv"
        )
        parser.add_argument(
            "--scaffold", default="", help="Scaffold name (default: the experiment id)."
        )
        parser.add_argument("--model", default="unknown", help="The LLM behind the agent.")
        parser.add_argument(
            "--publish", action="store_true", help="Publish the experiments at once."
        )
        parser.add_argument(
            "--jobs",
            type=int,
            default=1,
            help="Experiments imported at once, each in a process of its own "
            f"(1: in this process; this machine has {os.cpu_count()} CPUs).",
        )

    def handle(
        self,
        *args,
        runs_dir: Path,
        experiments: Path | None,
        scaffold: str,
        model: str,
        publish: bool,
        jobs: int,
        **options,
    ):
        # Streamed: each experiment read, stored (COPY on PostgreSQL) in one transaction
        # and its figures computed once.
        try:
            result = import_runs_folder(
                runs_dir,
                experiments,
                scaffold=scaffold,
                model=model,
                publish=publish,
                jobs=max(1, jobs),
            )
        except RunsFolderError as exc:
            stored = getattr(exc, "stored", [])
            kept = f" ({len(stored)} experiments stored before it stay)" if stored else ""
            raise CommandError(f"{exc}{kept}") from None
        self.stdout.write(
            f"imported {len(result.experiments)} experiments, {result.reports} reports"
        )
