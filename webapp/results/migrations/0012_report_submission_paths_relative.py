"""Reports stored with the submission's absolute path on the grading machine (the demo's,
an upload's extraction folder) give it relative to the run's folder, as new reports do."""

from django.db import migrations
from django.db.models import Q

from benchmark.reports import submission_path_in_run


def relative_paths(apps, schema_editor):
    GradeReport = apps.get_model("results", "GradeReport")
    absolute = GradeReport.objects.filter(
        Q(submission_path__startswith="/") | Q(submission_path__regex=r"^[A-Za-z]:[\\/]")
    ).only("pk", "submission_path")
    changed = []
    for report in absolute.iterator(chunk_size=2000):
        report.submission_path = submission_path_in_run(report.submission_path)
        changed.append(report)
        if len(changed) >= 2000:
            GradeReport.objects.bulk_update(changed, ["submission_path"])
            changed = []
    GradeReport.objects.bulk_update(changed, ["submission_path"])


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0011_figures_due_for_competition_levels"),
    ]

    operations = [migrations.RunPython(relative_paths, migrations.RunPython.noop)]
