"""The split the corrections tests import onto, and a medalled run to disqualify."""

from __future__ import annotations

from webapp.results.models import GradeReport

SPLIT = "demo"


def medalled_run(experiment):
    report = GradeReport.objects.filter(
        experiment=experiment, is_current=True, any_medal=True
    ).first()
    assert report is not None, "the fixture needs a medal to disqualify"
    return report.run
