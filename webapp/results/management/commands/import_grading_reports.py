from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from webapp.results.aggregates import experiment_aggregate_refresh
from webapp.results.models import Experiment
from webapp.results.reports_import import RunsFolderError, read_runs_folder
from webapp.results.services import (
    UnknownCompetitions,
    agent_get_or_create,
    experiment_create_from_reports,
)


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

    def handle(
        self,
        *args,
        runs_dir: Path,
        experiments: Path | None,
        scaffold: str,
        model: str,
        publish: bool,
        **options,
    ):
        try:
            found = read_runs_folder(runs_dir, experiments)
        except RunsFolderError as exc:
            raise CommandError(str(exc)) from None
        created = []
        for item in found:
            agent = agent_get_or_create(scaffold or item.experiment_id, model)
            try:
                experiment = experiment_create_from_reports(
                    name=item.experiment_id,
                    agent=agent,
                    run_groups=item.run_groups,
                    source=Experiment.Source.REPORTED,
                    is_published=publish,
                )
            except UnknownCompetitions as exc:
                raise CommandError(
                    f"{item.experiment_id}: {exc}; nothing of it was stored"
                ) from None
            created.append(experiment)
        for experiment in created:
            experiment_aggregate_refresh(experiment.pk)
        n_reports = sum(len(g.reports) for item in found for g in item.run_groups)
        self.stdout.write(f"imported {len(created)} experiments, {n_reports} reports")
