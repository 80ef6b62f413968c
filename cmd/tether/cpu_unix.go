//go:build unix

package main

import (
	"syscall"
	"time"
)

// ownCPU is the CPU time (user and system) this process has used.
func ownCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
