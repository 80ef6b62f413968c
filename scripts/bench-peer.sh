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
#
# On Postgres and Redis, Tether's line also gives the database server's
# CPU per job over the work phase (tether bench --proc-cpu), read from
# /proc for the server processes on this machine.
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
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ "$backend" = redis ] && [ -n "${TETHER_TEST_REDIS_PIDFILE:-}" ] && scripts/redis.sh stop
	rm -rf "$tmp"
}
trap cleanup EXIT

case "$backend" in
sqlite)
	jobs=${JOBS:-20000}
	store="sqlite:$tmp/tether.db"
	;;
postgres)
	jobs=${JOBS:-50000}
	eval "$(scripts/postgres.sh)"
	psql -X -q "$TETHER_TEST_POSTGRES_URL" -c "DROP SCHEMA IF EXISTS bench CASCADE; CREATE SCHEMA bench" >/dev/null
	store="$TETHER_TEST_POSTGRES_URL&search_path=bench"
	;;
redis)
	jobs=${JOBS:-50000}
	eval "$(scripts/redis.sh)"
	store="$TETHER_TEST_REDIS_URL"
	;;
*)
	echo "usage: $0 sqlite|postgres|redis" >&2
	exit 2
	;;
esac

go build -o "$tmp/server" ./cmd/server
go build -o "$tmp/tether" ./cmd/tether

"$tmp/server" --addr 127.0.0.1:0 --store "$store" >"$tmp/server.log" 2>&1 &
pid=$!
url=
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

flags=()
[ -n "${SERIAL:-}" ] && flags+=(--serial)
case "$backend" in
postgres) flags+=(--proc-cpu postgres) ;;
redis) flags+=(--proc-cpu redis-server) ;;
esac
tether=$("$tmp/tether" bench --url "$url" --jobs "$jobs" --workers 4 --batch 100 "${flags[@]}")
kill -TERM "$pid"
wait "$pid" || true
pid=
# The peer runs alone, after our server stopped: neither takes CPU from the other.
case "$backend" in
sqlite)
	theirs=$(cd "$peer/river" && go run . -sqlite "$tmp/river.db" -workers 200 -n "$jobs")
	field='work+persist'
	;;
postgres)
	theirs=$(cd "$peer/river" && DATABASE_URL="$TETHER_TEST_POSTGRES_URL" go run . -n "$jobs")
	field='work+persist'
	;;
redis)
	addr=${TETHER_TEST_REDIS_URL#redis://}
	theirs=$(cd "$peer/asynq" && go run . -redis "${addr%/*}" -n "$jobs" -c 100)
	field='work'
	;;
esac

echo "$tether"
echo "$theirs"
ours=$(sed -n 's/.* work=\([0-9.]*\) jobs\/s.*/\1/p' <<<"$tether")
peerrate=$(sed -n "s/.* $field=\([0-9.]*\) [a-z]*\/s.*/\1/p" <<<"$theirs")
awk -v a="$ours" -v b="$peerrate" -v f="$field" 'BEGIN { if (b > 0) printf "ratio tether work / peer %s = %.2f\n", f, a / b }'
