//go:build pprof

package main

import (
	"log"
	"net/http"
	_ "net/http/pprof"
	"os"
)

// Built with -tags pprof, the server serves net/http/pprof on
// TETHER_PPROF_ADDR (default 127.0.0.1:6060), for profiling benchmarks:
//
//	go build -tags pprof -o /tmp/server ./cmd/server
//	go tool pprof -seconds 20 http://127.0.0.1:6060/debug/pprof/profile
func init() {
	addr := os.Getenv("TETHER_PPROF_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6060"
	}
	go func() { log.Println(http.ListenAndServe(addr, nil)) }()
}
