"""What the runs app adds to other apps' pages (registered in ``RunsConfig.ready``)."""

from webapp import figures
from webapp.runs.selectors import time_scaling


def time_scaling_figure(experiment):
    """The experiment page's score-over-hours curve, None without snapshots."""
    points = time_scaling(experiment.pk)
    return figures.time_scaling(points) if points else None
