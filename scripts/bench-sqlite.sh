#!/usr/bin/env bash
# Tether's HTTP burn-down on SQLite and River's peer bench on SQLite, in one
# invocation on the same machine, so their ratio means something (see
# ../shared/peerbench/README.md). Prints both lines and the ratio of
# Tether's settled rate to River's work+persist rate.
#
#	scripts/bench-sqlite.sh            # 20,000 jobs
#	JOBS=50000 scripts/bench-sqlite.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-20000}
peer=${PEERBENCH:-$root/../shared/peerbench}
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/server" ./cmd/server
go build -o "$tmp/tether" ./cmd/tether

"$tmp/server" --addr 127.0.0.1:0 --store "sqlite:$tmp/tether.db" >"$tmp/server.log" 2>&1 &
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

tether=$("$tmp/tether" bench --url "$url" --jobs "$jobs" --workers 4 --batch 100)
kill -TERM "$pid"
wait "$pid" || true
pid=
# River runs alone, after our server stopped: neither takes CPU from the other.
river=$(cd "$peer/river" && go run . -sqlite "$tmp/river.db" -workers 200 -n "$jobs")

echo "$tether"
echo "$river"
ours=$(sed -n 's/.* work=\([0-9.]*\) jobs\/s.*/\1/p' <<<"$tether")
theirs=$(sed -n 's/.* work+persist=\([0-9.]*\) jobs\/s.*/\1/p' <<<"$river")
awk -v a="$ours" -v b="$theirs" 'BEGIN { if (b > 0) printf "ratio tether work / river work+persist = %.2f\n", a / b }'
