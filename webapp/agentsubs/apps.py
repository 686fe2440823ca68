from django.apps import AppConfig


class AgentSubsConfig(AppConfig):
    name = "webapp.agentsubs"
    label = "agentsubs"
    verbose_name = "Submitted agents"

    def ready(self) -> None:
        from webapp import work
        from webapp.agentsubs import kinds, reproductions, services
        from webapp.core import changes
        from webapp.results import extensions
        from webapp.runs.services.catalogue import agent_source

        work.declare(*kinds.kinds())
        # Built submissions are agents the site can run.
        agent_source(services.submitted_agents)
        changes.figures_stored.connect(
            reproductions.on_figures_stored, dispatch_uid="agentsubs-figures-stored"
        )
        # An experiment's page shows the reproductions it is part of.
        extensions.experiment_figure("reproductions", reproductions.reproductions_of)
        # The leaderboard shows a reported entry's public verdict beside its provenance.
        extensions.entry_verdicts(reproductions.public_verdicts)
