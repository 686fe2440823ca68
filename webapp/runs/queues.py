"""The run queues, one per resource class (``config.variables.RUN_QUEUE_NAMES``): a run
asking for GPUs goes to ``runs.gpu``, any other to ``runs.cpu``; a run host consumes the
classes it can serve."""

from config.variables import RUN_QUEUE_NAMES

RUN_QUEUE_CPU, RUN_QUEUE_GPU = RUN_QUEUE_NAMES


def queue_for(gpus: int) -> str:
    """The queue of a run asking for ``gpus`` GPUs."""
    return RUN_QUEUE_GPU if gpus else RUN_QUEUE_CPU
