#!/bin/sh
# PostgreSQL started as the official image starts it, for what compose.yaml asks of it: on
# an empty $PGDATA, a cluster whose superuser is $POSTGRES_USER with the password
# $POSTGRES_PASSWORD and a database $POSTGRES_DB; then the server as the postgres user,
# listening on every address with password authentication (local connections trusted, so
# that pg_isready and maintenance need no password inside the container).
set -eu

if [ "${1:-}" = postgres ] && [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /run/postgresql
    chown postgres:postgres "$PGDATA" /run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
    user="${POSTGRES_USER:-postgres}"
    database="${POSTGRES_DB:-$user}"
    password_file="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
    initdb --pgdata="$PGDATA" --username="$user" --pwfile="$password_file" \
        --encoding=UTF8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
    if [ "$database" != postgres ]; then
        echo "CREATE DATABASE \"$database\" OWNER \"$user\"" |
            postgres --single -D "$PGDATA" postgres >/dev/null
    fi
    echo "postgres-entrypoint: made the cluster (user $user, database $database)" >&2
fi

exec "$@"
