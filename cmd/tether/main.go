// Command tether is Tether's command-line tool. Subcommands:
//
//	tether bench --url URL --jobs N --workers W --batch B   HTTP burn-down benchmark
//	  --queues N --other-queues M   leases naming N queues among N+M
//	  --single --enqueue-only       one job per request; the enqueue alone
//	tether polls --url URL --pollers P --queues Q            idle long-polls and wake-up latency
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	// The bench client's heap is small and busy, like the server's: GC at
	// 400 % growth rather than Go's 100 % leaves more of a shared machine
	// to what is being measured.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "tether:", err)
		os.Exit(1)
	}
}

// errUsage means the usage was printed already.
var errUsage = errors.New("usage")

const usage = `usage: tether <command> [flags]

commands:
  bench   enqueue N jobs over HTTP, burn them down with W workers, print the rates
  polls   what idle long-polls cost: server CPU while they wait, enqueue → poll latency
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "bench":
		return bench(ctx, args[1:], stdout, stderr)
	case "polls":
		return polls(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "tether: unknown command %q\n%s", args[0], usage)
		return errUsage
	}
}
