//go:build unix && !linux

package main

import "syscall"

// dieWithParent: only Linux has Pdeathsig; elsewhere the keeper's lifeline
// alone ties the group to the runner.
func dieWithParent(*syscall.SysProcAttr) {}
