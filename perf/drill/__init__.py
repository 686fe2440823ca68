"""Failure drills on a running mleboard (``python -m perf.drill``, see ``__main__``), and
the machinery other perf scripts start a site with: ``processes``, ``database``, ``disk``,
``uploads``, ``site`` (one site: web, worker, beat, broker), ``archive`` and ``drills``."""
