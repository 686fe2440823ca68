"""The runs app's writes, by job: ``catalogue`` (the agents a site runs, its backend),
``launch``, ``execution`` on a run host, ``outputs`` handed to grading, and ``ending``
(cancelled, silent, or handed over)."""
