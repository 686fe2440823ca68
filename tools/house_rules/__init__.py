"""The house rules: patterns that caused trouble once, banned by reading the source.

Each rule (``rules.py``) is a declaration: what it finds (a regular expression per line,
or a function over the source), the files it covers, why it is a rule, the places it
allows with why, and a bad and a good example the engine checks it against before it
runs, so a rule that stops seeing what it bans fails instead of passing quietly. Run them
with ``python -m tools.house_rules`` (``make lint``); the suite runs them too
(``tests/tools/test_house_rules.py``). Where ruff has the rule, ruff does it
(``[tool.ruff]`` in pyproject.toml)."""
