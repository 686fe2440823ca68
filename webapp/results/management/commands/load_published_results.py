from pathlib import Path

import yaml
from django.core.management.base import BaseCommand
from django.db import transaction

import benchmark
from webapp.results.models import Experiment
from webapp.results.services import agent_get_or_create

DEFAULT = Path(benchmark.__file__).parent / "data" / "published_results.yaml"


class Command(BaseCommand):
    help = "Enter the published MLE-bench leaderboard (Any Medal % per split) as reported entries."

    def add_arguments(self, parser):
        parser.add_argument("--file", type=Path, default=DEFAULT)

    @transaction.atomic
    def handle(self, *args, file: Path, **options):
        created = 0
        for entry in yaml.safe_load(file.read_text()):
            agent = agent_get_or_create(entry["agent"], str(entry["llm"]))
            name = f"{entry['agent']} × {entry['llm']} (published)"
            figures = {
                s: {"mean": float(entry[s][0]), "standard_error": float(entry[s][1])}
                for s in ("low", "medium", "high", "all")
            }
            _, was_created = Experiment.objects.update_or_create(
                name=name,
                source=Experiment.Source.REPORTED,
                defaults={
                    "agent": agent,
                    "is_published": True,
                    "published_figures": figures,
                    "runtime_hours": entry.get("hours"),
                    "date": entry.get("date"),
                    "hardware": entry.get("hardware", ""),
                    "source_available": bool(entry.get("source_available")),
                    "source_url": entry.get("url", ""),
                    "notes": "Figures as published in MLE-bench's leaderboard; no reports behind them here.",
                },
            )
            created += was_created
        self.stdout.write(f"published results: {created} created")
