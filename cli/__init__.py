"""The ``mleboard`` command line: the wiring of ``benchmark``, ``graders`` and ``runner``.

``cli.main`` builds the parser and holds the catalogue, ranking, aggregation and
published-results commands; ``cli.grading`` the grading ones (``grade``, ``grade-sample``,
``validate``); ``cli.runs`` the agent ones (``run``, ``images``). This package is the only
place outside the web app where running an agent and grading it meet: ``benchmark``
imports nothing of ``runner``.

Every handler imports the library it needs inside its function, so that
``mleboard --help`` starts without loading pandas. Exit codes: 0 success, 2 a usage or
input problem the message explains.
"""


class CommandError(Exception):
    """A problem the user can fix; printed on stderr, exit code 2."""
