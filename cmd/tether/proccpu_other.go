//go:build !linux

package main

import "time"

// procCPU is measured on Linux only.
func procCPU(string) (time.Duration, bool) { return 0, false }
