package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// about is what --help says the program is.
const about = `Tether is a job-queue server. This one process serves the JSON API under
/v1 (producers enqueue jobs; workers lease them, heartbeat while they work,
and ack or fail them), the dashboard at /, and the scheduler loop that gives
back the jobs of workers that went silent, times out leases, promotes
scheduled jobs and prunes finished ones. Jobs live in one store, named by
--store: a SQLite file for one server, or Postgres or Redis shared by any
number of replicas.`

// storeForms are the --store URLs openStore accepts, for --help.
var storeForms = [][2]string{
	{"sqlite:PATH, sqlite://PATH", "a SQLite file, created if missing (default sqlite:tether.db;\n" +
		"sqlite:///var/lib/tether.db is absolute). One server process per file: a\n" +
		"second one on the same file refuses to start."},
	{"postgres://USER:PASS@HOST:5432/DB", "Postgres (also postgresql://…), migrated at start. Query parameters\n" +
		"of libpq and pgxpool apply: sslmode=, connect_timeout=, pool_max_conns=,\n" +
		"search_path= (the schema to use)."},
	{"redis://[USER:PASS@]HOST:6379/DB", "Redis, one primary (not Cluster). prefix= sets the key prefix\n" +
		"(default tether:); go-redis options such as dial_timeout= apply."},
	{"rediss://[USER:PASS@]HOST:6380/DB", "Redis over TLS, as redis://."},
}

// printHelp writes --help: what the program is, the store URLs, and every
// flag with its TETHER_* variable.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: server [flags]\n\n%s\n\nStores (--store, TETHER_STORE):\n", about)
	for _, f := range storeForms {
		fmt.Fprintf(w, "  %s\n", f[0])
		fmt.Fprintf(w, "      %s\n", strings.ReplaceAll(f[1], "\n", "\n      "))
	}
	fmt.Fprintf(w, "\nFlags (each also read from the TETHER_* variable beside it; a flag given wins):\n")
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if e, ok := f.Value.(explained); ok {
			kind = e.kind
		}
		name := "--" + f.Name
		if kind != "" {
			name += " " + kind
		}
		fmt.Fprintf(w, "  %s  [%s]\n      %s", name, envName(f.Name), usage)
		switch f.DefValue {
		case "", "0", "0s", "false": // no default, or its usage says it
		default:
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintf(w, "\nAlso read: GOGC (default 400 for this server), and TETHER_PPROF_ADDR in a build\nwith -tags pprof.\n")
}

// explainValues makes every flag of fs say what it wants when a value does
// not parse: the flag package says only "parse error".
func explainValues(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if kind, _ := flag.UnquoteUsage(f); kinds[kind] != "" {
			f.Value = explained{Value: f.Value, kind: kind}
		}
	})
}

// kinds describes the values of each flag type the server uses.
var kinds = map[string]string{
	"duration": "a duration such as 500ms, 15s or 1h",
	"int":      "a whole number",
	"float":    "a number",
}

// explained is a flag value whose parse error says what it wants.
type explained struct {
	flag.Value
	kind string // a key of kinds
}

func (e explained) Set(s string) error {
	if err := e.Value.Set(s); err != nil {
		return fmt.Errorf("want %s", kinds[e.kind])
	}
	return nil
}
