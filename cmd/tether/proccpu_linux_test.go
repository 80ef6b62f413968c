package main

import (
	"crypto/sha256"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procCPU counts this very process by its command name: after work it
// reports more than before, and at least the CPU the work took by the
// process's own measure (less a clock tick of rounding).
func TestProcCPUCountsProcessesByName(t *testing.T) {
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSpace(string(comm))
	before, ok := procCPU(name)
	if !ok {
		t.Fatalf("procCPU(%q) found no process, not even this one", name)
	}
	ownBefore, _ := ownCPU()
	sum := sha256.Sum256(nil)
	for ownAfter, _ := ownCPU(); ownAfter-ownBefore < 200*time.Millisecond; ownAfter, _ = ownCPU() {
		for range 10000 {
			sum = sha256.Sum256(sum[:])
		}
	}
	after, _ := procCPU(name)
	if d := after - before; d < 180*time.Millisecond {
		t.Errorf("procCPU grew %v over 200ms of this process's CPU", d)
	}
	own, _ := ownCPU()
	self, ok := procCPU(strconv.Itoa(os.Getpid()))
	if !ok || self < own-20*time.Millisecond {
		t.Errorf("procCPU by this process's id: %v, %v; its own count %v", self, ok, own)
	}
	if _, ok := procCPU("no-such-process-name"); ok {
		t.Error("procCPU found a process named no-such-process-name")
	}
}
