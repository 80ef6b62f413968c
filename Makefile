# Tether's entry points. `make test` is what CI runs (.ci/run).
GO ?= go

.PHONY: test tools vet fmt-check bench bench-peer

test: tools vet fmt-check
	$(GO) test -race -count=1 -timeout 20m ./...

# tools installs what the tests need when the machine lacks it, with
# Debian's packages. SQLite is compiled in (cgo), so a C compiler is all it
# takes today; the Postgres, Redis and dashboard tests add lines such as
#	$(call need,redis-server,redis-server)
#	$(call need,chromium,chromium)
tools:
	$(call need,gcc,gcc)
	$(call need,curl,curl)

# need installs Debian package $(2) unless command $(1) is on the PATH.
need = @command -v $(1) >/dev/null 2>&1 || { \
	echo "installing $(2)"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2); }

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# bench runs the Go benchmarks, without the tests.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# bench-peer runs Tether's HTTP burn-down and River's on SQLite in one go.
bench-peer:
	scripts/bench-sqlite.sh
