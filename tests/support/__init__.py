"""What tests share: builders of archives, catalogues and demo sites, named fakes (a base
model, an LLM), the suite's plumbing (parallel workers, template databases, polling) and
helpers the test modules of several folders call. Fixtures live in conftest.py files;
this package holds plain functions and data only, and imports no test module."""
