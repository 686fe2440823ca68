#!/bin/sh
# Start two Celery workers (real processes): one for grading (queues grading and default)
# and one for agent runs (queues runs.cpu[,runs.gpu], as many at once as the host has run
# slots), so a day-long agent run never delays grading; then beat and gunicorn. Stop them
# all when gunicorn stops.
set -eu
BIN=${BIN:-.venv/bin}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
LOG=${MLEBOARD_VAR_DIR:-var}/log
mkdir -p "$LOG"
# The demo runs agents as local processes unless the operator says otherwise: not isolated,
# allowed for this demo only, and the run pages say so. Set MLEBOARD_RUN_BACKEND=docker on a
# host with a Docker engine.
export MLEBOARD_RUN_BACKEND="${MLEBOARD_RUN_BACKEND:-local}"
# The demo takes sign-ups (mail goes to the console); a deployment's default is closed.
export MLEBOARD_SIGNUP="${MLEBOARD_SIGNUP:-open}"
if [ "$MLEBOARD_RUN_BACKEND" = local ]; then
    export MLEBOARD_ALLOW_UNISOLATED_RUNS="${MLEBOARD_ALLOW_UNISOLATED_RUNS:-1}"
fi
"$BIN/celery" -A webapp worker -n grading@%h -Q grading,default \
    --concurrency "${WORKER_CONCURRENCY:-2}" --loglevel INFO --logfile "$LOG/worker-grading.log" &
GRADING=$!
# This machine is a run host too: its runs worker registers it (MLEBOARD_HOST_*) and takes
# the run classes it can serve: runs.cpu, and runs.gpu when it has GPUs (MLEBOARD_HOST_GPUS,
# or any nvidia-smi lists when that is unset).
RUN_QUEUES=runs.cpu
if [ -n "${MLEBOARD_HOST_GPUS:-}" ] || { [ -z "${MLEBOARD_HOST_GPUS+set}" ] &&
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; }; then
    RUN_QUEUES=runs.cpu,runs.gpu
fi
"$BIN/celery" -A webapp worker -n runs@%h -Q "$RUN_QUEUES" \
    --concurrency "${MLEBOARD_RUN_SLOTS:-2}" --loglevel INFO --logfile "$LOG/worker-runs.log" &
RUNS=$!
"$BIN/celery" -A webapp beat --loglevel INFO --logfile "$LOG/beat.log" \
    --schedule "${MLEBOARD_VAR_DIR:-var}/celerybeat-schedule" &
BEAT=$!
trap 'kill $GRADING $RUNS $BEAT 2>/dev/null || true' EXIT INT TERM
echo
echo "mleboard is up: http://$HOST:$PORT/   (logs: $LOG/worker-grading.log, $LOG/worker-runs.log; Ctrl-C stops all)"
echo
"$BIN/gunicorn" webapp.wsgi:application --bind "$HOST:$PORT" --workers "${WEB_CONCURRENCY:-2}" \
    --access-logfile - --timeout 120
