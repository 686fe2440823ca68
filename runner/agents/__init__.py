"""The agents that ship with mleboard: one folder each (``agent.yaml``, ``Dockerfile``, files)."""
