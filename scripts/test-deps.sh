#!/usr/bin/env bash
# What the test suite needs besides Python: Chromium (browser tests), the site's JavaScript
# (web/), a running Docker engine and the agent images (runner tests). Installs missing
# Debian packages when run as root (or with sudo), starts dockerd, builds the images
# (cached by content tag).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

need=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || need+=(debootstrap)
command -v dockerd >/dev/null 2>&1 || [ -x /usr/sbin/dockerd ] || need+=(docker.io)
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
