"""mleboard's configuration: every environment variable it reads, declared once
(``config.variables``), read through one set of parsers (``config.parsers``).

Pure Python at the bottom of the layers: every package (``webapp``, ``runner``,
``benchmark``, ``cli``, the ``perf/`` scripts) may import it, and it imports none of them.
"""

from config.parsers import MAX_SIZE, ConfigurationError, parse_size
from config.variables import VARIABLES, Variable, check_environment, declared, env, is_set

__all__ = [
    "MAX_SIZE",
    "VARIABLES",
    "ConfigurationError",
    "Variable",
    "check_environment",
    "declared",
    "env",
    "is_set",
    "parse_size",
]
