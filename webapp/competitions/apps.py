from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    name = "webapp.competitions"
    label = "competitions"
    verbose_name = "Competitions & leaderboards"
