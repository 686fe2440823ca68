"""Figures stored before the funnel carried its labels and per-seed values get them, so
pages draw every experiment's funnel from the stored figures alone."""

from django.db import migrations

# The labels as benchmark.aggregate.FUNNEL had them when this migration was written.
LABELS = {
    "made_submission": "Made submission",
    "valid_submission": "Valid",
    "above_median": "Above median",
    "any_medal": "Any medal",
}


def _label_funnels(figures: dict) -> bool:
    changed = False
    for split in (figures or {}).get("splits", {}).values():
        seeds = split.get("seeds") or []
        for stage in split.get("funnel") or []:
            if "label" not in stage:
                stage["label"] = LABELS.get(stage.get("stage"), stage.get("stage"))
                changed = True
            if "per_seed" not in stage and stage.get("metric"):
                stage["per_seed"] = [s.get("metrics", {}).get(stage["metric"]) for s in seeds]
                changed = True
    return changed


def forwards(apps, schema_editor):
    ExperimentAggregate = apps.get_model("results", "ExperimentAggregate")
    for aggregate in ExperimentAggregate.objects.iterator(chunk_size=200):
        changed = _label_funnels(aggregate.figures)
        changed = _label_funnels(aggregate.clean_figures) or changed
        if changed:
            aggregate.save(update_fields=["figures", "clean_figures"])


class Migration(migrations.Migration):
    dependencies = [("results", "0002_published_leaderboard_columns")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
