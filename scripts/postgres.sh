#!/usr/bin/env bash
# postgres.sh makes the machine's Postgres ready for Tether's tests and
# prints the URL to test against, for eval:
#
#	eval "$(scripts/postgres.sh)"   # exports TETHER_TEST_POSTGRES_URL
#
# It starts the Debian cluster (default 15/main) if it is down and creates
# the role and the database if they are missing; run again, it changes
# nothing. Progress goes to stderr, so stdout holds only the export line.
# It needs root (or the postgres user) and fails loudly when Postgres is
# not installed. Tests create a schema each inside the database and drop it
# when they end.
#
# Environment: PG_VERSION (15), PG_CLUSTER (main), TETHER_PG_USER (tether),
# TETHER_PG_PASSWORD (tether), TETHER_PG_DB (tether_test).
set -euo pipefail

version=${PG_VERSION:-15}
cluster=${PG_CLUSTER:-main}
user=${TETHER_PG_USER:-tether}
password=${TETHER_PG_PASSWORD:-tether}
db=${TETHER_PG_DB:-tether_test}

log() { echo "postgres.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

command -v pg_lsclusters >/dev/null 2>&1 ||
	die "PostgreSQL is not installed (pg_lsclusters not found); install it with: apt-get install -y postgresql-$version"

# as_postgres runs a command as the postgres superuser.
as_postgres() {
	if [ "$(id -un)" = postgres ]; then
		"$@"
	elif [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		die "run as root or as postgres (needed to start the cluster and create the role)"
	fi
}

# cluster_field prints column $1 of the cluster's pg_lsclusters line.
cluster_field() {
	pg_lsclusters --no-header | awk -v v="$version" -v c="$cluster" -v f="$1" '$1 == v && $2 == c { print $f }'
}

if [ -z "$(cluster_field 2)" ]; then
	[ -x "/usr/lib/postgresql/$version/bin/postgres" ] ||
		die "no Postgres $version server binaries; install with: apt-get install -y postgresql-$version"
	log "creating cluster $version/$cluster"
	pg_createcluster "$version" "$cluster" >&2
fi

case "$(cluster_field 4)" in
online*) ;;
*)
	log "starting cluster $version/$cluster"
	pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start >&2 ||
		die "could not start cluster $version/$cluster; see /var/log/postgresql/postgresql-$version-$cluster.log"
	;;
esac

port=$(cluster_field 3)
psql_admin() { as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$port" -d postgres "$@"; }

# The server may take a moment to accept connections after a start.
for _ in $(seq 1 30); do
	if as_postgres pg_isready -q -p "$port"; then
		break
	fi
	sleep 1
done
as_postgres pg_isready -q -p "$port" || die "cluster $version/$cluster does not accept connections on port $port"

if [ "$(psql_admin -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$user'")" != 1 ]; then
	log "creating role $user"
	# Superuser: tests create and drop schemas, terminate the listener
	# backend to test reconnects, and read pg_stat_activity.
	psql_admin -c "CREATE ROLE \"$user\" LOGIN SUPERUSER PASSWORD '$password'"
fi
if [ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]; then
	log "creating database $db"
	as_postgres createdb -p "$port" -O "$user" "$db"
fi

echo "export TETHER_TEST_POSTGRES_URL='postgres://$user:$password@127.0.0.1:$port/$db?sslmode=disable'"
