# Tether's entry points. `make test` is what CI runs (.ci/run).
GO ?= go

.PHONY: test tools vet fmt-check templ-check fuzz fuzz-short fuzz-long staticcheck vuln bench bench-peer

# test checks the tree (vet, gofmt, templ output, staticcheck, pinned in
# go.mod with the tool directive), runs every fuzz target briefly, starts
# the databases the backend tests need (the machine's Postgres, a throwaway
# redis-server that it stops afterwards) and runs every test under -race.
# With CI=true a backend test whose server is missing fails.
test: tools vet fmt-check templ-check fuzz-short staticcheck
	@set -e; \
	eval "$$(scripts/postgres.sh)"; \
	eval "$$(scripts/redis.sh)"; \
	trap 'scripts/redis.sh stop' EXIT; \
	echo "go test -race -count=1 -timeout 25m ./..."; \
	$(GO) test -race -count=1 -timeout 25m ./...

# fuzz-short runs every fuzz target (func Fuzz… in a _test.go file) for
# FUZZTIME, starting from its seed corpus in testdata/fuzz. It is part of
# make test, so its budget is a count of executions, never a duration: Go
# 1.26's fuzz coordinator can report "context deadline exceeded" at the end
# of a timed budget on a loaded machine without any failing input
# (golang/go#75804), which would fail CI by chance.
FUZZTIME ?= 2000x
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME)

# fuzz-long is the search for new inputs, by the clock, outside make test:
# make fuzz-long FUZZTIME_LONG=10m.
FUZZTIME_LONG ?= 3m
fuzz-long:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME_LONG)

fuzz:
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for target in $$(grep -h '^func Fuzz' $$dir/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			echo "fuzz $$dir $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$dir; \
		done; \
	done

staticcheck:
	$(GO) tool staticcheck ./...

# vuln checks the dependencies against the Go vulnerability database. It
# needs the database online, so it stays out of test.
vuln:
	$(GO) tool govulncheck ./...

# tools installs what the tests need when the machine lacks it, with
# Debian's packages: a C compiler for SQLite (cgo), curl for the README
# walkthrough, Postgres 15 (normally present, stopped), redis-server,
# Chromium for the dashboard's browser tests, and a python3 with requests
# for docs/workers.md's Python worker.
tools:
	$(call need,gcc,gcc)
	$(call need,curl,curl)
	$(call need,pg_lsclusters,postgresql-15)
	$(call need,redis-server,redis-server)
	$(call need,chromium,chromium)
	@python3 -c 'import requests' 2>/dev/null || /usr/bin/python3 -c 'import requests' 2>/dev/null || { \
		echo "installing python3-requests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-requests; }

# need installs Debian package $(2) unless command $(1) is on the PATH.
need = @command -v $(1) >/dev/null 2>&1 || { \
	echo "installing $(2)"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2); }

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# templ-check fails when the committed templ output is stale: `templ
# generate` must change no file under web/ and add none (compared by
# checksum, so a work tree with edits in progress checks the same way a
# fresh clone does), and every .templ file must be formatted.
templ-check:
	@tmp=$$(mktemp -d); \
	find web -type f -exec sha256sum {} + | sort > $$tmp/before; \
	$(GO) tool templ generate -path web > $$tmp/log 2>&1 || { cat $$tmp/log; rm -rf $$tmp; exit 1; }; \
	find web -type f -exec sha256sum {} + | sort > $$tmp/after; \
	if ! cmp -s $$tmp/before $$tmp/after; then \
		echo "templ generate changed web/ (commit its output):"; diff $$tmp/before $$tmp/after; rm -rf $$tmp; exit 1; \
	fi; rm -rf $$tmp
	$(GO) tool templ fmt -fail web

# bench runs the Go benchmarks, without the tests.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# bench-peer runs Tether's HTTP burn-down and its peer's in one go: River on
# SQLite and on Postgres, Asynq on Redis (BACKENDS to choose).
BACKENDS ?= sqlite postgres redis
bench-peer:
	@for b in $(BACKENDS); do scripts/bench-peer.sh $$b; done
