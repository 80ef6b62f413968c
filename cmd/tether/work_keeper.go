//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
)

// keeperCommand is the hidden subcommand tether work runs as each child's
// process-group leader: tether _keeper PATH ARGV0 [ARGS...].
//
// A runner killed by SIGKILL can signal nothing, and Linux's Pdeathsig
// reaches only the process the runner started, not what that one forked
// (sh -c 'a; b' forks both). So the runner starts the keeper, the keeper
// starts the command in the same group, and the keeper waits on its
// lifeline, a pipe whose other end only the runner holds: when the runner
// dies, by any signal, the kernel closes that end and the keeper kills the
// whole group. The keeper also reports the command's exit exactly (a code
// or a signal) on fd 5, and outlives the SIGTERM the runner sends to the
// group, so that report is never lost.
const keeperCommand = "_keeper"

func keeper(args []string) error {
	if len(args) < 2 {
		return errors.New("_keeper is tether work's own: not for use by hand")
	}
	// Pdeathsig fires when the thread that started the child ends; the
	// main goroutine keeps its thread, and lives as long as the keeper.
	runtime.LockOSThread()
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	control, life, status := os.NewFile(3, "control"), os.NewFile(4, "lifeline"), os.NewFile(5, "status")
	if control == nil || life == nil || status == nil {
		return errors.New("_keeper runs under tether work only (fds 3-5)")
	}
	syscall.CloseOnExec(4)
	syscall.CloseOnExec(5)
	cmd := &exec.Cmd{Path: args[0], Args: args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		ExtraFiles: []*os.File{control}, SysProcAttr: &syscall.SysProcAttr{}}
	dieWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(status, "error %v\n", err)
		return nil
	}
	// The command holds them now; the runner sees EOF when it closes them.
	os.Stdin.Close()
	os.Stdout.Close()
	control.Close()
	go func() {
		_, _ = io.Copy(io.Discard, life)
		_ = syscall.Kill(-os.Getpid(), syscall.SIGKILL) // the runner is gone: the group follows
	}()
	_ = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		fmt.Fprintf(status, "signal %d\n", int(ws.Signal()))
	} else {
		fmt.Fprintf(status, "exit %d\n", ws.ExitStatus())
	}
	return nil
}
