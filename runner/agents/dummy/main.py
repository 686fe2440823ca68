"""The dummy agent: submit the sample submission unchanged.

Runs with the system python3 only. Paths come from the environment the harness sets,
with MLE-bench's container layout as the default.
"""

import os
import shutil
import subprocess
import sys

data_dir = os.environ.get("DATA_DIR", "/home/data")
submission_dir = os.environ.get("SUBMISSION_DIR", "/home/submission")
validate_script = os.environ.get("VALIDATE_SCRIPT", "/home/validate_submission.sh")

sample = os.path.join(data_dir, "sample_submission.csv")
if not os.path.isfile(sample):
    print(f"dummy: no sample submission at {sample}", file=sys.stderr)
    sys.exit(1)
target = os.path.join(submission_dir, "submission.csv")
shutil.copyfile(sample, target)
print(f"dummy: copied {sample} to {target}")
if os.path.exists(validate_script):
    answer = subprocess.run([validate_script, target], capture_output=True, text=True)
    print(f"dummy: validation service says: {answer.stdout.strip()}")
