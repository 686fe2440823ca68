#!/bin/sh
# `make run`: the site's processes (webapp/ops/processes.py) under supervisord, which restarts
# any that dies and logs it: gunicorn, a grading worker (queues grading and default), a
# runs worker (runs.cpu, plus runs.gpu when the machine has GPUs, MLEBOARD_RUN_SLOTS at
# once; this machine is a run host too) and beat. Ctrl-C (or SIGTERM) stops them all.
set -eu
BIN=${BIN:-.venv/bin}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
export HOST PORT
LOG=${MLEBOARD_VAR_DIR:-var}/log
# The demo runs agents as local processes unless the operator says otherwise: not isolated,
# allowed for this demo only, and the run pages say so. Set MLEBOARD_RUN_BACKEND=docker on a
# host with a Docker engine.
export MLEBOARD_RUN_BACKEND="${MLEBOARD_RUN_BACKEND:-local}"
# The demo takes sign-ups (their mail is printed here); a deployment's default is closed.
export MLEBOARD_SIGNUP="${MLEBOARD_SIGNUP:-open}"
if [ "$MLEBOARD_RUN_BACKEND" = local ]; then
    export MLEBOARD_ALLOW_UNISOLATED_RUNS="${MLEBOARD_ALLOW_UNISOLATED_RUNS:-1}"
fi
echo "mleboard is starting at http://$HOST:$PORT/ (logs: $LOG/; Ctrl-C stops all)"
# "mleboard is up" is printed once the site answers, by a process of its own beside the
# supervisor (which takes this shell's process id): started in a subshell, so that it is
# not a child of the supervisor.
( "$BIN/python" -m webapp.ops.processes announce $$ & )
exec "$BIN/python" -m webapp.ops.processes serve
