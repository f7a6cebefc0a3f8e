#!/usr/bin/env bash
# A throwaway PostgreSQL server for the test suite: Debian's `postgresql` package (installed when
# missing), `initdb` into a temporary folder, `pg_ctl` on a free port of 127.0.0.1 only, one
# database, a random password (scram-sha-256), so the tests also see that flakestat never prints it.
# With openssl at hand the server also takes TLS, with a certificate for 127.0.0.1 and localhost
# signed by a throwaway authority whose certificate is FLAKESTAT_TEST_POSTGRES_CA (the TLS tests
# skip without it); plain connections work as before.
#
#   source .ci/postgres.sh start   # exports FLAKESTAT_TEST_POSTGRES=postgres://… and prints it
#   .ci/postgres.sh stop           # stops it and removes the folder (FLAKESTAT_TEST_POSTGRES_DIR)
#
# Run directly, `start` prints the two `export` lines to eval. initdb refuses root: as root the
# server runs as the package's `postgres` user (runuser). A failed start is a warning, not a
# failed build: the PostgreSQL tests then say they skipped.

_flakestat_pg_bin() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$dir" ] || [ ! -x "$dir/initdb" ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo ".ci/postgres.sh: installing Debian's postgresql" >&2
            export DEBIAN_FRONTEND=noninteractive
            { apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; } || return 1
            dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
        else
            echo ".ci/postgres.sh: no initdb and not root with apt-get" >&2
            return 1
        fi
    fi
    [ -x "$dir/initdb" ] && echo "$dir"
}

# Runs a command as the server's user: `postgres` when we are root, else ourselves.
_flakestat_pg_as() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

_flakestat_pg_start() {
    local bin dir password port url tries
    bin=$(_flakestat_pg_bin) || return 1
    dir=$(mktemp -d "${TMPDIR:-/tmp}/flakestat-pg.XXXXXX") || return 1
    chmod 0700 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
    printf '%s\n' "$password" >"$dir/pwfile"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir/pwfile"
    _flakestat_pg_as "$bin/initdb" -D "$dir/data" -U flakestat --pwfile="$dir/pwfile" \
        --auth=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
        echo ".ci/postgres.sh: initdb failed: $(tail -n 3 "$dir/initdb.log")" >&2
        return 1
    }
    rm -f "$dir/pwfile"
    local tls=""
    if _flakestat_pg_certs "$dir"; then
        tls="-c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
    fi
    # A random port; taken ones (another server, another CI) make pg_ctl fail: try another.
    for tries in 1 2 3 4 5 6 7 8; do
        port=$((20000 + RANDOM % 40000))
        if ss -ltn 2>/dev/null | grep -q ":$port "; then continue; fi
        if _flakestat_pg_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off $tls" start >/dev/null; then
            url="postgres://flakestat:$password@127.0.0.1:$port/flakestat"
            break
        fi
    done
    if [ -z "${url:-}" ]; then
        echo ".ci/postgres.sh: the server did not start: $(tail -n 3 "$dir/server.log")" >&2
        return 1
    fi
    PGPASSWORD=$password "$bin/createdb" -h 127.0.0.1 -p "$port" -U flakestat flakestat || return 1
    export FLAKESTAT_TEST_POSTGRES="$url" FLAKESTAT_TEST_POSTGRES_DIR="$dir"
    echo "export FLAKESTAT_TEST_POSTGRES=$url"
    echo "export FLAKESTAT_TEST_POSTGRES_DIR=$dir"
    if [ -n "$tls" ]; then
        export FLAKESTAT_TEST_POSTGRES_CA="$dir/ca.pem"
        echo "export FLAKESTAT_TEST_POSTGRES_CA=$dir/ca.pem"
    fi
}

# A throwaway authority and the server's certificate for 127.0.0.1 and localhost, signed by it,
# in $1 (the key readable by the server's user only); fails without openssl.
_flakestat_pg_certs() {
    local dir=$1
    command -v openssl >/dev/null || return 1
    {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 2 -subj "/CN=flakestat test CA" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" &&
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -keyout "$dir/server.key" -out "$dir/server.csr" -subj "/CN=localhost" &&
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' \
                >"$dir/server.ext" &&
            openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
                -CAcreateserial -out "$dir/server.crt" -days 2 -extfile "$dir/server.ext"
    } >"$dir/openssl.log" 2>&1 || {
        echo ".ci/postgres.sh: no TLS (openssl failed: $(tail -n 1 "$dir/openssl.log"))" >&2
        return 1
    }
    rm -f "$dir/ca.key" "$dir/server.csr"
    chmod 0600 "$dir/server.key"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir/server.key" "$dir/server.crt"
    return 0
}

_flakestat_pg_stop() {
    local dir=${1:-${FLAKESTAT_TEST_POSTGRES_DIR:-}} bin
    [ -n "$dir" ] && [ -d "$dir/data" ] || return 0
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    _flakestat_pg_as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$dir"
    unset FLAKESTAT_TEST_POSTGRES FLAKESTAT_TEST_POSTGRES_DIR FLAKESTAT_TEST_POSTGRES_CA
}

case "${1:-}" in
start) _flakestat_pg_start ||
    echo ".ci/postgres.sh: no PostgreSQL server: the PostgreSQL tests will skip" >&2 ;;
stop) _flakestat_pg_stop "${2:-}" ;;
*) echo "usage: .ci/postgres.sh start|stop [DIR]" >&2 ;;
esac
