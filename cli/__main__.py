"""``python -m cli``: the same as the ``mleboard`` command."""

import sys

from cli.main import main

sys.exit(main())
