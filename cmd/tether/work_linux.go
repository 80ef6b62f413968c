package main

import "syscall"

// dieWithParent has the kernel SIGKILL the command when its keeper dies
// (killed alone, say by the OOM killer), so it never outlives the keeper
// that would report it.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
