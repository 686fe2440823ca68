"""One grader per competition, grouped in modules by metric family (see ``graders.registry``)."""
