from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    name = "webapp.competitions"
    label = "competitions"
    verbose_name = "Competitions & leaderboards"

    def ready(self) -> None:
        from webapp import work
        from webapp.competitions import kinds

        work.declare(*kinds.kinds())
