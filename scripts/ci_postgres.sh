#!/usr/bin/env bash
# Start a PostgreSQL server on 127.0.0.1 for the workspace-store tests and print its URL.
#
# Idempotent and quick when the server already runs: installs Debian's postgresql package only
# if no server binary is there, starts the Debian cluster (creating one if the package made
# none), creates the test role and database if missing, and checks a login over TCP.
# Progress goes to stderr; stdout is only the connection URL (its last line), so
#     export EVALSUITE_TEST_PG_URL="$(bash scripts/ci_postgres.sh)"
# works as it is. Must run as root (apt-get, and pg_ctlcluster switches to the postgres user
# itself: PostgreSQL refuses to run as root).
#
# The password is a fixed test password: the server listens on loopback only (Debian's default
# listen_addresses = 'localhost') and holds nothing but test rows.
set -euo pipefail

PG_USER="${EVALSUITE_PG_USER:-evalsuite_test}"
PG_PASSWORD="${EVALSUITE_PG_PASSWORD:-evalsuite_test}"
PG_DB="${EVALSUITE_PG_DB:-evalsuite_test}"

log() { echo "ci_postgres: $*" >&2; }
die() { log "error: $*"; exit 1; }

have_server() { compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null && command -v pg_ctlcluster >/dev/null; }

if ! have_server; then
    [ "$(id -u)" -eq 0 ] || die "PostgreSQL is not installed and installing it needs root"
    log "installing Debian's postgresql package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql >&2
    have_server || die "apt-get installed postgresql but no server binary was found"
fi

# The first cluster pg_lsclusters knows; make one with the newest installed server if none.
cluster_line() { pg_lsclusters --no-header 2>/dev/null | head -n 1; }
if [ -z "$(cluster_line)" ]; then
    version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
    log "creating cluster $version/main"
    pg_createcluster "$version" main >&2
fi
read -r PG_VERSION PG_CLUSTER PG_PORT _ < <(cluster_line)

# The socket directory lives on tmpfs on a booted system; a fresh container may lack it.
install -d -o postgres -g postgres -m 2775 /var/run/postgresql

if ! pg_isready -q -h 127.0.0.1 -p "$PG_PORT" \
        && ! pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" status >/dev/null 2>&1; then
    log "starting cluster $PG_VERSION/$PG_CLUSTER on port $PG_PORT"
    pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start >&2
fi

for _ in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p "$PG_PORT" && break
    sleep 0.5
done
pg_isready -q -h 127.0.0.1 -p "$PG_PORT" || die "server on 127.0.0.1:$PG_PORT is not accepting connections"

# Role and database, created only when missing (\gexec runs the generated statement, if any).
(cd /tmp && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres \
    -v user="$PG_USER" -v password="$PG_PASSWORD" -v db="$PG_DB" >&2) <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'user', :'password')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'user') \gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'user', :'password') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'user')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db') \gexec
SQL

URL="postgresql://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${PG_PORT}/${PG_DB}"
PGCONNECT_TIMEOUT=10 psql -X -q -At "$URL" -c 'SELECT 1' >/dev/null \
    || die "cannot log in as $PG_USER over TCP on 127.0.0.1:$PG_PORT"
log "PostgreSQL $PG_VERSION ready on 127.0.0.1:$PG_PORT, database $PG_DB"
echo "$URL"
