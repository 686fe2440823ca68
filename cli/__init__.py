"""The ``mleboard`` command line: the wiring of ``benchmark``, ``graders`` and ``runner``.

``cli.main`` builds the parser and holds the catalogue, ranking, aggregation and
published-results commands; ``cli.grading`` the grading ones (``grade``, ``grade-sample``,
``validate``); ``cli.runs`` the agent ones (``run``, ``images``). This package is the only
place outside the web app where running an agent and grading it meet: ``benchmark``
imports nothing of ``runner``.

Every handler imports the library it needs inside its function, so that
``mleboard --help`` starts without loading pandas. Exit codes: 0 success, 2 a usage or
input problem the message explains, 130 interrupted (Ctrl-C).
"""

# Exit code of a program ended by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """A problem the user can fix; printed on stderr, exit code 2."""


def run() -> int:
    """The ``mleboard`` program. Ctrl-C at any point of its start-up (the parser, the
    command's libraries, which load inside their handlers) or of a command that does not
    answer it itself ends it with one line and exit code 130, not a traceback: everything
    is imported in here, where the interrupt is caught."""
    import sys

    try:
        from cli.main import main

        return main()
    except KeyboardInterrupt:
        print("mleboard: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
