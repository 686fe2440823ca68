#!/usr/bin/env bash
# Make sure a Docker engine is running on this machine: install it if it is missing
# (Debian/Ubuntu packages), then start dockerd in the background unless one already answers.
#
# The engine is started without the default bridge and without iptables rules: agent
# containers run with network_mode="none", so they need neither, and nothing the tests
# start can send traffic anywhere.
#
# Environment:
#   DOCKERD_LOG      where dockerd writes its log (default: ${TMPDIR:-/tmp}/dockerd.log)
#   DOCKERD_TIMEOUT  seconds to wait for the engine to answer (default: 60)
#   DOCKERD_ARGS     extra arguments for dockerd
set -euo pipefail

log="${DOCKERD_LOG:-${TMPDIR:-/tmp}/dockerd.log}"
timeout="${DOCKERD_TIMEOUT:-60}"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v dockerd >/dev/null 2>&1 && [ ! -x /usr/sbin/dockerd ]; then
    echo "docker-up: installing docker.io" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >&2
fi
# debootstrap builds the agents' base image (runner/images.py); install it alongside.
if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
    echo "docker-up: installing debootstrap" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >&2
fi

if docker info >/dev/null 2>&1; then
    echo "docker-up: engine already running" >&2
    exit 0
fi

dockerd_bin="$(command -v dockerd || echo /usr/sbin/dockerd)"
echo "docker-up: starting dockerd (log: $log)" >&2
# shellcheck disable=SC2086  # DOCKERD_ARGS is a list of words on purpose
as_root nohup "$dockerd_bin" --bridge=none --iptables=false ${DOCKERD_ARGS:-} >"$log" 2>&1 &

for _ in $(seq "$timeout"); do
    if docker info >/dev/null 2>&1; then
        echo "docker-up: engine ready" >&2
        exit 0
    fi
    sleep 1
done
echo "docker-up: dockerd did not answer within ${timeout}s; last log lines:" >&2
tail -n 30 "$log" >&2 || true
exit 1
