#!/usr/bin/env bash
# A throwaway redis-server for the tests: installs redis-server with
# apt-get when it is missing, starts one on a free port with its own
# temporary directory, and prints the exports the tests read:
#
#	eval "$(scripts/redis.sh)"      # TETHER_TEST_REDIS_URL, TETHER_TEST_REDIS_PIDFILE
#	go test ./store/redis/
#	scripts/redis.sh stop           # stops it and removes its directory
#
# Run again while that instance lives (TETHER_TEST_REDIS_PIDFILE set), it
# prints the same exports instead of starting another. Everything but the
# exports goes to stderr, so eval sees only them.
set -euo pipefail

say() { echo "redis.sh: $*" >&2; }

alive() { # pidfile → true if its redis-server runs and answers
	local pidfile=$1 pid port
	[ -f "$pidfile" ] || return 1
	pid=$(cat "$pidfile" 2>/dev/null) || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	port=$(cat "$(dirname "$pidfile")/port" 2>/dev/null) || return 1
	redis-cli -p "$port" ping 2>/dev/null | grep -q PONG
}

exports() { # pidfile
	local dir
	dir=$(dirname "$1")
	echo "export TETHER_TEST_REDIS_URL=redis://127.0.0.1:$(cat "$dir/port")/0"
	echo "export TETHER_TEST_REDIS_PIDFILE=$1"
}

stop() {
	local pidfile=${1:-${TETHER_TEST_REDIS_PIDFILE:-}} pid dir
	if [ -z "$pidfile" ] || [ ! -f "$pidfile" ]; then
		say "nothing to stop (no pidfile ${pidfile:-given})"
		return 0
	fi
	dir=$(dirname "$pidfile")
	pid=$(cat "$pidfile")
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
	fi
	# Only ever a directory this script made.
	case "$(basename "$dir")" in
	tether-redis.*) rm -rf "$dir" ;;
	esac
	say "stopped redis-server $pid"
}

install() {
	command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 && return 0
	if [ "$(id -u)" != 0 ]; then
		say "redis-server is missing and installing it needs root: apt-get install redis-server"
		exit 1
	fi
	say "installing redis-server"
	{
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server
	} >&2
}

start() {
	if [ -n "${TETHER_TEST_REDIS_PIDFILE:-}" ] && alive "$TETHER_TEST_REDIS_PIDFILE"; then
		exports "$TETHER_TEST_REDIS_PIDFILE"
		return 0
	fi
	install
	local dir port pidfile
	dir=$(mktemp -d "${TMPDIR:-/tmp}/tether-redis.XXXXXX")
	pidfile=$dir/redis.pid
	for _ in $(seq 20); do
		port=$((20000 + RANDOM % 40000))
		# Taken: something answers there.
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
		echo "$port" >"$dir/port"
		# Throwaway: no RDB, no AOF; the durability tests start their own.
		redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
			--daemonize yes --pidfile "$pidfile" --logfile "$dir/redis.log" >&2 || continue
		for _ in $(seq 100); do
			alive "$pidfile" && break
			sleep 0.05
		done
		if alive "$pidfile"; then
			say "redis-server $(cat "$pidfile") on 127.0.0.1:$port, directory $dir"
			exports "$pidfile"
			return 0
		fi
		stop "$pidfile" 2>/dev/null || true
		mkdir -p "$dir"
	done
	say "could not start redis-server; its log:"
	cat "$dir/redis.log" >&2 2>/dev/null || true
	exit 1
}

case "${1:-start}" in
start) start ;;
stop) stop "${2:-}" ;;
*)
	say "usage: $0 [start|stop [PIDFILE]]"
	exit 2
	;;
esac
