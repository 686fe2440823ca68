#!/bin/bash
# Start AIDE on the competition in /home/data.
#
# The model endpoint is any OpenAI-compatible server: OPENAI_BASE_URL (e.g. a vLLM or a
# proxy URL ending in /v1) and OPENAI_API_KEY come from the harness's environment
# (agent.yaml: env_from_host / secrets); AIDE's OpenAI client reads both. The harness
# enforces the time limit; TIME_LIMIT_SECS is passed on so that AIDE can plan its steps.
set -euo pipefail

: "${OPENAI_BASE_URL:?OPENAI_BASE_URL must point at an OpenAI-compatible endpoint}"
: "${OPENAI_API_KEY:?OPENAI_API_KEY must be set}"
AGENT_DIR="${AGENT_DIR:-/home/agent}"
WORK_DIR="${HOME}/aide"
mkdir -p "$WORK_DIR"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  HARDWARE="$(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | paste -sd ', ' -)"
else
  HARDWARE="a CPU"
fi
secs="${TIME_LIMIT_SECS:-86400}"
TIME_LIMIT="$((secs / 3600))hrs $(((secs % 3600) / 60))mins $((secs % 60))secs"
export HARDWARE TIME_LIMIT

# The task text: our instructions (paths made relative to AIDE's workspace), the notes,
# then the competition's description.
{
  sed 's|/home/||g' "${INSTRUCTIONS_FILE:-/home/instructions.txt}"
  echo
  envsubst < "$AGENT_DIR/additional_notes.txt"
  printf '\nCOMPETITION INSTRUCTIONS\n------\n\n'
  cat /home/data/description.md
} > "$WORK_DIR/full_instructions.txt"

# AIDE writes into workspaces/exp and logs/exp: link those to the folders the harness keeps.
mkdir -p "$WORK_DIR/workspaces/exp" "$WORK_DIR/logs"
ln -sfn "${LOGS_DIR:-/home/logs}" "$WORK_DIR/logs/exp"
ln -sfn "${CODE_DIR:-/home/code}" "$WORK_DIR/workspaces/exp/best_solution"
ln -sfn "${SUBMISSION_DIR:-/home/submission}" "$WORK_DIR/workspaces/exp/best_submission"

cd "$WORK_DIR"
exec aide \
  data_dir=/home/data/ \
  desc_file="$WORK_DIR/full_instructions.txt" \
  exp_name=exp \
  copy_data=False \
  agent.steps="${AIDE_STEPS}" \
  agent.time_limit="${secs}" \
  agent.code.model="${AIDE_CODE_MODEL}" \
  agent.feedback.model="${AIDE_FEEDBACK_MODEL}" \
  agent.search.max_debug_depth=20 \
  agent.search.debug_prob=1 \
  exec.timeout=32400 \
  "$@"
