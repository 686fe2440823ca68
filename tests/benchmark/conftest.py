"""Fixtures of the benchmark tests (``mlebench_checkout`` comes from tests/conftest.py)."""
