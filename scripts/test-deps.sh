#!/usr/bin/env bash
# What the test suite needs besides Python: Chromium (browser tests), the site's JavaScript
# (web/), a running Docker engine, the agent images (runner tests), docker-compose and the
# images compose.yaml runs (tests/stack/). Installs missing Debian packages when run as root
# (or with sudo), starts dockerd, builds the images (cached by content tag).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

need=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || need+=(debootstrap)
command -v dockerd >/dev/null 2>&1 || [ -x /usr/sbin/dockerd ] || need+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "test-deps: installing ${need[*]}" >&2
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi
# Dolos itself (tests/benchmark/test_integrity_dolos.py checks our similarity against it),
# at the version pinned in tools/dolos/package-lock.json; skipped when already installed.
if ! cmp -s tools/dolos/package-lock.json tools/dolos/node_modules/.mleboard-installed-lock; then
  echo "test-deps: npm ci --prefix tools/dolos" >&2
  npm ci --prefix tools/dolos --no-audit --no-fund --loglevel=error
  cp tools/dolos/package-lock.json tools/dolos/node_modules/.mleboard-installed-lock
fi
# The JavaScript the site serves (web/package-lock.json: Plotly's partial bundle), which the
# tests' collectstatic collects; the same stamp as `make setup`'s.
if ! cmp -s web/package-lock.json web/node_modules/.mleboard-installed-lock; then
  echo "test-deps: npm ci --prefix web" >&2
  npm ci --prefix web --no-audit --no-fund --loglevel=error
  cp web/package-lock.json web/node_modules/.mleboard-installed-lock
fi
bash scripts/docker-up.sh
.venv/bin/mleboard images
# compose.yaml's images from Debian's packages (no registry is reached), and the site's image
# built FROM them as the stack test builds it: cold here, once; the test's build then comes
# from the engine's cache.
stack_images="$(.venv/bin/mleboard images --stack)"
started=$(date +%s)
# shellcheck disable=SC2086  # one VAR=image word per line
env $stack_images SECRET_KEY=unused docker-compose --project-name mleboardtestdeps build \
  --quiet web >/dev/null
echo "test-deps: the site's image built in $(($(date +%s) - started)) s," \
  "$(docker image inspect --format '{{.Size}}' mleboardtestdeps_web | awk '{printf "%d MB", $1 / 1e6}')" >&2
