from django.apps import AppConfig


class IntegrityConfig(AppConfig):
    name = "webapp.integrity"
    label = "integrity"
    verbose_name = "Integrity: reference code and run checks"

    def ready(self) -> None:
        from webapp import work
        from webapp.integrity import kinds, services
        from webapp.results.grading.aggregates import RunReview, reviewed_by

        work.declare(*kinds.kinds())
        work.on_end("grading", services.checks_after_grading)
        # Results' figures leave out what review disqualified, and count the checks.
        reviewed_by(
            RunReview(
                disqualified_reports=services.disqualified_reports,
                disqualified_runs=services.disqualified_runs,
                counts=services.integrity_counts,
            )
        )
