"""Figures stored before the per-competition counts carried the outcome levels and mean
scores that compare decides a competition on: mark them due, so the sweeper computes
them again (compare says "being recomputed" until it has)."""

from django.db import migrations
from django.utils import timezone


def mark_due(apps, schema_editor):
    Experiment = apps.get_model("results", "Experiment")
    Experiment.objects.filter(aggregate__isnull=False, figures_due_since__isnull=True).update(
        figures_due_since=timezone.now()
    )


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0010_publish_and_regrade_permissions"),
    ]

    operations = [migrations.RunPython(mark_due, migrations.RunPython.noop)]
