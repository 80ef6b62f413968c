//go:build !unix

package main

import "time"

// ownCPU is not measured here.
func ownCPU() (time.Duration, bool) { return 0, false }
