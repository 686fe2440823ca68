"""mleboard's benchmark library: the catalogue, Kaggle's medal rules as MLE-bench applies
them, human private leaderboards, MLE-bench grade reports, aggregation and the CLI.

Pure Python, no Django. Import the submodules you need (``benchmark.catalogue``,
``benchmark.medals``, ``benchmark.leaderboard``, ``benchmark.reports``,
``benchmark.aggregate``, ``benchmark.mlebench_checkout``); this package module stays
empty so that ``import benchmark`` (and ``mleboard --help``) is instant.
"""
