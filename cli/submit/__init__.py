"""``mleboard submit`` and ``mleboard login``: ``interface`` (the commands, the checks made
here, their messages and exit codes), ``transfer`` (sending over tus, resumably) and
``state`` (what is remembered between invocations)."""
