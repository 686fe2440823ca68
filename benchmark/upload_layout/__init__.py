"""What an extracted upload holds, checked against the catalogue.

Three layouts, looked for in this order, each read by its own module: **run groups**
(``run_groups``, as MLE-bench's ``run_agent.py`` writes them), **jsonl**
(``submissions_jsonl``, a ``submissions.jsonl`` as ``mlebench grade`` takes it, plus the
files it names) and **reports** (``report_files``, grading-report JSON taken as reported).
``read_upload`` (``reading``) tells them apart and returns ``UploadContents``. A run
without ``submission.csv`` is a run with no submission: a result, not an error. Everything
the uploader must fix raises UploadLayoutError with a message saying what.
"""

from __future__ import annotations

from benchmark.upload_layout.contents import (
    ReportedGroup,
    SubmittedRun,
    UploadContents,
    competition_of,
)
from benchmark.upload_layout.reading import read_upload
from benchmark.upload_tree import UploadLayoutError

__all__ = [
    "ReportedGroup",
    "SubmittedRun",
    "UploadContents",
    "UploadLayoutError",
    "competition_of",
    "read_upload",
]
