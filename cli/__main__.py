"""``python -m cli``: the same as the ``mleboard`` command."""

import sys

from cli import run

sys.exit(run())
