#!/usr/bin/env bash
# Tether's HTTP burn-down and its peer's, in one invocation on the same
# machine and the same database server, so their ratio means something.
# Prints both lines and the ratio. The peers (River, Asynq) are small Go
# modules kept outside this repository, so that they never enter its
# go.mod: PEERBENCH names their directory (default ../shared/peerbench,
# holding river/ and asynq/, each a main package taking the flags below).
#
#	scripts/bench-peer.sh sqlite     # vs River on SQLite, 20,000 jobs
#	scripts/bench-peer.sh postgres   # vs River on Postgres, 50,000 jobs (scripts/postgres.sh)
#	scripts/bench-peer.sh redis      # vs Asynq on Redis, 50,000 jobs (scripts/redis.sh)
#	JOBS=100000 scripts/bench-peer.sh postgres
#	SERIAL=1 scripts/bench-peer.sh postgres   # workers settle, then lease (tether bench --serial)
#	RUNS=5 scripts/bench-peer.sh postgres     # five pairs, each on a fresh store, and the ratios' median
#	PG_CLUSTER=bench scripts/bench-peer.sh postgres   # on another Debian cluster (scripts/postgres.sh)
#
# On Postgres and Redis, Tether's line also gives the database server's
# CPU per job over the work phase (tether bench --proc-cpu), read from
# /proc for the server processes on this machine. Each run also prints the
# machine's CPU per job over each side's whole run (Tether: server, client
# and database; the peer: its process and the database), from /proc: a
# figure the machine's other load moves far less than a rate.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
backend=${1:-sqlite}
peer=${PEERBENCH:-$root/../shared/peerbench}
if [ ! -d "$peer" ]; then
	echo "bench-peer: no peer benchmarks at $peer." >&2
	echo "It needs a directory with river/ (River, run as: go run . -n N [-sqlite FILE -workers W])" >&2
	echo "and asynq/ (Asynq: go run . -redis HOST:PORT -n N -c 100), each its own Go module;" >&2
	echo "set PEERBENCH=DIR. Tether's own side alone: go run ./cmd/tether bench --help" >&2
	exit 2
fi
tmp=$(mktemp -d)
cleanup() {
	[ -f "$tmp/server.pid" ] && kill "$(cat "$tmp/server.pid")" 2>/dev/null
	[ "$backend" = redis ] && [ -n "${TETHER_TEST_REDIS_PIDFILE:-}" ] && scripts/redis.sh stop
	rm -rf "$tmp"
}
trap cleanup EXIT

case "$backend" in
sqlite)
	jobs=${JOBS:-20000}
	;;
postgres)
	jobs=${JOBS:-50000}
	eval "$(scripts/postgres.sh)"
	;;
redis)
	jobs=${JOBS:-50000}
	eval "$(scripts/redis.sh)"
	;;
*)
	echo "usage: $0 sqlite|postgres|redis" >&2
	exit 2
	;;
esac

go build -o "$tmp/server" ./cmd/server
go build -o "$tmp/tether" ./cmd/tether
case "$backend" in
sqlite | postgres) (cd "$peer/river" && go build -o "$tmp/peer" .) ;;
redis) (cd "$peer/asynq" && go build -o "$tmp/peer" .) ;;
esac

flags=()
[ -n "${SERIAL:-}" ] && flags+=(--serial)
case "$backend" in
postgres)
	# The cluster's postmaster and its children, so that other clusters on
	# the machine (and tests running there) do not count as ours.
	datadir=$(pg_lsclusters -h | awk -v v="${PG_VERSION:-15}" -v c="${PG_CLUSTER:-main}" '$1 == v && $2 == c { print $6 }')
	pm=$(head -1 "$datadir/postmaster.pid" 2>/dev/null || true)
	flags+=(--proc-cpu "${pm:-postgres}")
	;;
redis) flags+=(--proc-cpu redis-server) ;;
esac

# fresh_store prints the store of a run, empty.
fresh_store() {
	case "$backend" in
	sqlite)
		rm -f "$tmp"/tether.db*
		echo "sqlite:$tmp/tether.db"
		;;
	postgres)
		psql -X -q "$TETHER_TEST_POSTGRES_URL" -c "DROP SCHEMA IF EXISTS bench CASCADE; CREATE SCHEMA bench" >/dev/null 2>&1
		echo "$TETHER_TEST_POSTGRES_URL&search_path=bench"
		;;
	redis)
		redis-cli -u "$TETHER_TEST_REDIS_URL" FLUSHDB >/dev/null
		echo "$TETHER_TEST_REDIS_URL"
		;;
	esac
}

# ours runs Tether's burn-down on a fresh store and prints its line.
ours() {
	: >"$tmp/server.log"
	"$tmp/server" --addr 127.0.0.1:0 --store "$(fresh_store)" >"$tmp/server.log" 2>&1 &
	local pid=$!
	echo "$pid" >"$tmp/server.pid"
	local url=
	for _ in $(seq 100); do
		url=$(sed -n 's/^tether listening on \(http:[^ ]*\) .*/\1/p' "$tmp/server.log")
		[ -n "$url" ] && curl -fsS "$url/healthz" >/dev/null 2>&1 && break
		url=
		sleep 0.1
	done
	if [ -z "$url" ]; then
		echo "the server did not start:" >&2
		cat "$tmp/server.log" >&2
		exit 1
	fi
	# --keep: the store is thrown away whole (settle_db, fresh_store), so the
	# client deletes nothing, work that would count in the run's CPU.
	"$tmp/tether" bench --url "$url" --jobs "$jobs" --workers 4 --batch 100 --keep "${flags[@]}"
	kill -TERM "$pid"
	wait "$pid" || true
	rm -f "$tmp/server.pid"
	settle_db bench
}

# settle_db leaves nothing of a run for the database server to clean up
# while the other side runs: on Postgres, the run's rows (schema bench for
# Tether, River's river_job) go at once instead of by autovacuum, which had
# reclaimed River's dead rows, gin indexes and all, during Tether's next
# run (seconds of the cluster's CPU, counted as Tether's and taken from
# its rate).
settle_db() {
	[ "$backend" = postgres ] || return 0
	case "$1" in
	bench) psql -X -q "$TETHER_TEST_POSTGRES_URL" -c "DROP SCHEMA IF EXISTS bench CASCADE" >/dev/null 2>&1 ;;
	river) psql -X -q "$TETHER_TEST_POSTGRES_URL" -c "TRUNCATE river_job" >/dev/null 2>&1 || true ;;
	esac
}

# theirs runs the peer's bench (after our server stopped: neither takes
# CPU from the other) and prints its line.
theirs() {
	case "$backend" in
	sqlite)
		rm -f "$tmp"/river.db*
		"$tmp/peer" -sqlite "$tmp/river.db" -workers 200 -n "$jobs"
		;;
	postgres)
		settle_db river # River's bench deletes the jobs left from before: none
		DATABASE_URL="$TETHER_TEST_POSTGRES_URL" "$tmp/peer" -n "$jobs"
		settle_db river
		;;
	redis)
		addr=${TETHER_TEST_REDIS_URL#redis://}
		redis-cli -u "$TETHER_TEST_REDIS_URL" FLUSHDB >/dev/null
		"$tmp/peer" -redis "${addr%/*}" -n "$jobs" -c 100
		;;
	esac
}

# ticks prints the CPU this script's finished children have used so far
# (cutime + cstime: every server, client and peer it has waited for; a
# command substitution's subshell passes its own on) and the database
# server's (a Postgres cluster: its postmaster, the backends it has reaped
# and the live ones; redis-server), in clock ticks. Their differences over
# a run are that run's CPU, whole: enqueue or insert, work, start and stop.
hz=$(getconf CLK_TCK)
dbpid=
case "$backend" in
postgres) dbpid=${pm:-} ;;
redis) dbpid=$(cat "${TETHER_TEST_REDIS_PIDFILE:-/dev/null}" 2>/dev/null || true) ;;
esac
ticks() {
	local own db=0
	own=$(awk '{ print $16 + $17 }' "/proc/$$/stat")
	if [ -n "$dbpid" ]; then
		db=$(cat /proc/[0-9]*/stat 2>/dev/null | awk -v p="$dbpid" '$1 == p { s += $14 + $15 + $16 + $17 } $4 == p { s += $14 + $15 } END { print s + 0 }')
	fi
	echo "$own $db"
}

# perjob prints the CPU per job, in microseconds, between two ticks lines.
perjob() {
	awk -v a="$1" -v b="$2" -v hz="$hz" -v n="$jobs" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%.0f us (%.0f + database %.0f)", ((y[1] - x[1]) + (y[2] - x[2])) * 1e6 / hz / n,
			(y[1] - x[1]) * 1e6 / hz / n, (y[2] - x[2]) * 1e6 / hz / n
	}'
}

field='work+persist'
[ "$backend" = redis ] && field='work'
ratios=()
for run in $(seq "${RUNS:-1}"); do
	t0=$(ticks)
	tether=$(ours)
	t1=$(ticks)
	peerline=$(theirs)
	t2=$(ticks)
	echo "$tether"
	echo "$peerline"
	echo "run $run: machine CPU per job, whole run: tether $(perjob "$t0" "$t1"), peer $(perjob "$t1" "$t2")"
	ourrate=$(sed -n 's/.* work=\([0-9.]*\) jobs\/s.*/\1/p' <<<"$tether")
	peerrate=$(sed -n "s/.* $field=\([0-9.]*\) [a-z]*\/s.*/\1/p" <<<"$peerline")
	ratio=$(awk -v a="$ourrate" -v b="$peerrate" 'BEGIN { if (b > 0) printf "%.2f", a / b }')
	echo "run $run: ratio tether work / peer $field = $ratio"
	ratios+=("$ratio")
done
if [ "${#ratios[@]}" -gt 1 ]; then
	printf '%s\n' "${ratios[@]}" | sort -n | awk '{ r[NR] = $1 } END { printf "ratios %s runs: median %.2f, lowest %.2f, highest %.2f\n", NR, (NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2), r[1], r[NR] }'
fi
