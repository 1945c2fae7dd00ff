#!/usr/bin/env bash
# scripts/pg-cluster.sh - a throwaway PostgreSQL cluster for a test run.
#
#   scripts/pg-cluster.sh start DIR [--durable]   create and start; print URL
#   scripts/pg-cluster.sh stop DIR                stop it and remove DIR
#   scripts/pg-cluster.sh down DIR                stop it, keep its data
#   scripts/pg-cluster.sh up DIR                  start it again (same port)
#   scripts/pg-cluster.sh restart DIR             pg_ctl restart (same port)
#   scripts/pg-cluster.sh url DIR                 print its base URL again
#
# start creates the cluster in DIR (which must be missing or empty) with
# the server binaries of $(pg_config --bindir) (Debian's postgresql-15 keeps
# them off PATH), starts it on a free loopback port and prints its base URL,
# postgresql://postgres@127.0.0.1:PORT/postgres: the superuser `postgres`,
# which may CREATE DATABASE, trusted without a password on 127.0.0.1 only
# (listen_addresses is 127.0.0.1, and there is no Unix socket at all, so
# no socket path to keep short). max_connections is 400: enough for a few
# replicas' pools and the tests' own connections.
#
# initdb refuses to run as root: as root the server runs as the `postgres`
# user (created when missing, as Debian's package does) and DIR is handed
# to it; otherwise it runs as you.
#
# For speed the cluster does not wait for the disk (fsync, full-page
# writes and synchronous commit off: a crash of the machine loses it,
# which does not matter to a test). --durable keeps PostgreSQL's defaults
# (fsync and synchronous_commit on), for the benchmark.
#
# A port is picked free, then bound by the server; when another process
# took it in between (the log says "could not create any TCP/IP sockets")
# another one is tried, up to 10 times (IG_PG_CLUSTER_PORT, when set, is
# the first port tried: how tests/integration/test_replicas.py proves the
# retry). Everything the server says is in DIR/log; on a failure its last
# lines are printed.
set -euo pipefail

usage() {
    echo "usage: scripts/pg-cluster.sh start|stop|down|up|restart|url DIR" \
        "[--durable]" >&2
    exit 2
}

die() {
    echo "pg-cluster: $*" >&2
    exit 1
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
durable=0
for a in "$@"; do
    case $a in
    --durable) [ "$cmd" = start ] || usage; durable=1 ;;
    *) usage ;;
    esac
done
case $dir in
/*) ;;
*) dir=$(pwd)/$dir ;;
esac
marker=$dir/.ig-pg-cluster

command -v pg_config >/dev/null 2>&1 ||
    die "pg_config not found: install libpq-dev and postgresql-15"
bin=$(pg_config --bindir)
for p in initdb pg_ctl postgres; do
    [ -x "$bin/$p" ] || die "$bin/$p not found: install postgresql-15"
done

runas=()
if [ "$(id -u)" -eq 0 ]; then
    runas=(runuser -u postgres --)
fi

# as_server CMD...: CMD as the user the server runs as.
as_server() {
    "${runas[@]}" "$@"
}

# The log's last lines, to explain a failure.
show_log() {
    [ -f "$dir/log" ] && tail -n 20 "$dir/log" | sed 's/^/pg-cluster: log: /' >&2
    return 0
}

free_port() {
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

url_of() {
    echo "postgresql://postgres@127.0.0.1:$1/postgres"
}

port_of() {
    [ -f "$marker" ] || die "$dir holds no cluster started by this script"
    sed -n 's/^port = \([0-9][0-9]*\)$/\1/p' "$dir/data/postgresql.conf" |
        tail -n 1
}

# pg_ctl_start: start the server on the port in its config; 0 when it
# runs, 1 when it failed, 2 when the port was taken.
pg_ctl_start() {
    local seen=0
    [ -f "$dir/log" ] && seen=$(stat -c %s "$dir/log")
    if as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
        start >"$dir/log.start" 2>&1; then
        return 0
    fi
    if tail -c +$((seen + 1)) "$dir/log" 2>/dev/null |
        grep -q "could not create any TCP/IP sockets"; then
        return 2
    fi
    cat "$dir/log.start" >&2
    return 1
}

set_port() {
    # The last "port =" line of postgresql.conf wins.
    echo "port = $1" >>"$dir/data/postgresql.conf"
}

start() {
    local port tries=0 rc
    if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
        die "$dir is not empty: start needs a missing or empty directory"
    fi
    mkdir -p "$dir"
    chmod 700 "$dir"
    if [ ${#runas[@]} -gt 0 ]; then
        if ! id -u postgres >/dev/null 2>&1; then
            useradd --system --no-create-home --shell /usr/sbin/nologin \
                postgres || die "cannot create the postgres user"
        fi
        chown postgres: "$dir"
        as_server test -w "$dir" ||
            die "the postgres user cannot reach $dir: a parent directory is" \
                "closed to it (chmod 755 it, or use e.g. /tmp/NAME)"
    fi
    : >"$marker"
    as_server "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 \
        --locale=C.UTF-8 -N >"$dir/log.initdb" 2>&1 || {
        cat "$dir/log.initdb" >&2
        die "initdb failed"
    }
    {
        echo "# scripts/pg-cluster.sh"
        echo "listen_addresses = '127.0.0.1'"
        echo "unix_socket_directories = ''"
        echo "max_connections = 400"
        if [ "$durable" -eq 0 ]; then
            echo "fsync = off"
            echo "full_page_writes = off"
            echo "synchronous_commit = off"
        else
            echo "fsync = on"
            echo "synchronous_commit = on"
        fi
    } >>"$dir/data/postgresql.conf"
    port=${IG_PG_CLUSTER_PORT:-}
    while :; do
        [ -n "$port" ] || port=$(free_port)
        set_port "$port"
        rc=0
        pg_ctl_start || rc=$?
        [ "$rc" -eq 0 ] && break
        tries=$((tries + 1))
        port=
        if [ "$rc" -ne 2 ] || [ "$tries" -ge 10 ]; then
            show_log
            die "the server did not start (DIR $dir)"
        fi
    done
    url_of "$port"
}

running() {
    as_server "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

down() {
    [ -f "$marker" ] || die "$dir holds no cluster started by this script"
    if [ -d "$dir/data" ] && running; then
        as_server "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop \
            >/dev/null || {
            show_log
            die "the server did not stop"
        }
    fi
}

case $cmd in
start) start ;;
stop)
    if [ ! -e "$dir" ]; then
        exit 0
    fi
    down
    rm -rf "$dir"
    ;;
down) down ;;
up)
    port=$(port_of)
    running && die "the server in $dir is already running"
    rc=0
    pg_ctl_start || rc=$?
    if [ "$rc" -ne 0 ]; then
        show_log
        die "the server did not start again on port $port"
    fi
    url_of "$port"
    ;;
restart)
    port=$(port_of)
    as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -m fast -w -t 60 \
        restart >/dev/null || {
        show_log
        die "the server did not restart"
    }
    url_of "$port"
    ;;
url) url_of "$(port_of)" ;;
*) usage ;;
esac
