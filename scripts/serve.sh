#!/bin/sh
# Start a Celery worker (a real process, consuming the grading and runs queues) and
# gunicorn; stop the worker when gunicorn stops.
set -eu
BIN=${BIN:-.venv/bin}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
mkdir -p var/log
"$BIN/celery" -A webapp worker -Q grading,runs,default --concurrency "${WORKER_CONCURRENCY:-2}" \
    --loglevel INFO --logfile var/log/worker.log &
WORKER=$!
"$BIN/celery" -A webapp beat --loglevel INFO --logfile var/log/beat.log \
    --schedule var/celerybeat-schedule &
BEAT=$!
trap 'kill $WORKER $BEAT 2>/dev/null || true' EXIT INT TERM
echo
echo "mleboard is up: http://$HOST:$PORT/   (worker log: var/log/worker.log; Ctrl-C stops both)"
echo
"$BIN/gunicorn" webapp.wsgi:application --bind "$HOST:$PORT" --workers "${WEB_CONCURRENCY:-2}" \
    --access-logfile - --timeout 120
