//go:build !unix

package main

import (
	"context"
	"errors"
	"io"

	"github.com/tetherq/tether/client"
)

// keeperCommand is tether work's own; see work_keeper.go.
const keeperCommand = "_keeper"

var errNoUnix = errors.New("tether work needs a Unix system: it runs each job in a process group of its own")

func runWork(context.Context, workConfig, *client.Client, io.Writer) error { return errNoUnix }

func keeper([]string) error { return errNoUnix }
