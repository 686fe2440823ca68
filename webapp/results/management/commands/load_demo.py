from datetime import date
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction

from benchmark.demo import DEMO_COMPETITIONS, REFERENCE_AGENTS, build_demo, obfuscated_description
from benchmark.demo import description as demo_description
from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync, leaderboard_import_file
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.grading.services import run_grade
from webapp.results.models import Experiment, Run
from webapp.results.services import agent_get_or_create


class Command(BaseCommand):
    help = (
        "Build the demo competitions from scikit-learn's bundled data, their synthetic "
        "reference-population leaderboards, and grade a few reference agents on them."
    )

    def add_arguments(self, parser):
        parser.add_argument("--data-dir", type=Path, default=None)
        parser.add_argument("--seeds", type=int, default=3)

    def handle(self, *args, data_dir: Path | None = None, seeds: int = 3, **options):
        data_dir = Path(data_dir or settings.MLEBOARD_DATA_DIR)
        catalogue_sync(include_demo=True)
        store_demo_descriptions()
        if Experiment.objects.filter(source=Experiment.Source.REFERENCE).exists():
            self.stdout.write("demo: already loaded")
            return
        build = build_demo(data_dir, seeds=seeds)
        for competition_id in DEMO_COMPETITIONS:
            competition = Competition.objects.get(slug=competition_id)
            board = leaderboard_import_file(competition, build.leaderboards[competition_id])
            board.is_synthetic = True
            board.note = (
                "Synthetic reference population of models trained by mleboard (not human teams)."
            )
            board.save(update_fields=["is_synthetic", "note"])
        for agent_name in REFERENCE_AGENTS:
            agent = agent_get_or_create(f"reference/{agent_name}", "none (no LLM)")
            with transaction.atomic():
                experiment = Experiment.objects.create(
                    name=f"Demo reference: {agent_name}",
                    agent=agent,
                    source=Experiment.Source.REFERENCE,
                    is_published=True,
                    hardware="CPU",
                    runtime_hours=0.0,
                    date=date.today(),
                    source_available=True,
                    internet_access=False,
                    test_feedback=False,
                    notes="A simple reference agent of the demo, graded by mleboard's graders.",
                )
                runs = [
                    Run(
                        experiment=experiment,
                        competition=Competition.objects.get(slug=cid),
                        seed=seed,
                        run_group=f"{agent_name}-seed{seed}",
                        submission_path=str(path),
                    )
                    for seed, by_competition in build.submissions[agent_name].items()
                    for cid, path in by_competition.items()
                ]
                Run.objects.bulk_create(runs)
            for run in Run.objects.filter(experiment=experiment):
                run_grade(run.pk, data_dir=data_dir)
            experiment_aggregate_refresh(experiment.pk)
            self.stdout.write(f"demo: graded {experiment.runs.count()} runs of {experiment.name}")


def store_demo_descriptions() -> None:
    """The demo competitions' descriptions, the original and the obfuscated one (for runs
    on obfuscated descriptions)."""
    for competition_id in DEMO_COMPETITIONS:
        Competition.objects.filter(slug=competition_id).update(
            description=demo_description(competition_id),
            description_obfuscated=obfuscated_description(competition_id),
        )
