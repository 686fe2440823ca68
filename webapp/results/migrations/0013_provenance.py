"""Provenance in the field's words: "verified" (graded here) becomes "graded", and the
experiments of launches, which the site ran itself, "reproduced"."""

from django.db import migrations, models


def forwards(apps, schema_editor):
    Experiment = apps.get_model("results", "Experiment")
    Launch = apps.get_model("runs", "Launch")
    Experiment.objects.filter(source="verified").update(source="graded")
    launched = Launch.objects.exclude(experiment=None).values_list("experiment_id", flat=True)
    Experiment.objects.filter(pk__in=launched).update(source="reproduced")


def backwards(apps, schema_editor):
    Experiment = apps.get_model("results", "Experiment")
    Experiment.objects.filter(source__in=["graded", "reproduced"]).update(source="verified")


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0012_report_submission_paths_relative"),
        ("runs", "0008_launch_plural"),
    ]

    operations = [
        migrations.AlterField(
            model_name="experiment",
            name="source",
            field=models.CharField(
                choices=[
                    ("reproduced", "Reproduced (run by this site)"),
                    ("graded", "Graded (submissions graded here)"),
                    ("reported", "Reported (imported reports or figures)"),
                    ("reference", "Synthetic reference (demo)"),
                ],
                default="graded",
                max_length=20,
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
