#!/bin/sh
# Redis started as the official image starts it: as the redis user in /data, and, unless a
# configuration file is given, with protected mode off (the official image builds it so),
# since a container's clients never come from its own loopback.
set -eu

if [ "${1:-}" = redis-server ]; then
    shift
    case "${1:-}" in
    *.conf) set -- redis-server "$@" ;;
    *) set -- redis-server --protected-mode no "$@" ;;
    esac
    if [ "$(id -u)" = 0 ]; then
        chown -R redis:redis .
        exec setpriv --reuid=redis --regid=redis --init-groups "$@"
    fi
fi

exec "$@"
