package store

import (
	"testing"
	"time"
)

func isClosed(w *Waiter) bool {
	select {
	case <-w.C():
		return true
	default:
		return false
	}
}

func TestWakeupsHandOff(t *testing.T) {
	w := NewWakeups()
	a := w.Wait([]string{"q", "r"}) // waits on two queues
	b := w.Wait([]string{"q"})
	c := w.Wait([]string{"r"})
	d := w.Wait([]string{"q"})
	w.Signal("q", 1)
	if !isClosed(a) || isClosed(b) || isClosed(d) {
		t.Fatalf("Signal(q, 1) woke a %v b %v d %v; want the longest-waiting, a, alone", isClosed(a), isClosed(b), isClosed(d))
	}
	// a is off every list: a signal of r goes to c, not to a again.
	w.Signal("r", 1)
	if !isClosed(c) {
		t.Error("Signal(r, 1) did not wake c, next in line once a was woken")
	}
	if w.Waiting("r") != 0 || w.Waiting("q") != 2 {
		t.Errorf("waiting r %d q %d, want 0 and 2", w.Waiting("r"), w.Waiting("q"))
	}
	w.Signal("q", 0) // a count nobody knows: every waiter
	if !isClosed(b) || !isClosed(d) || w.Waiting("q") != 0 {
		t.Error("Signal(q, 0) did not wake every waiter of q")
	}
	w.Signal("q", 5) // nobody left: nothing to do
}

func TestWakeupsRelease(t *testing.T) {
	w := NewWakeups()
	a := w.Wait([]string{"q"})
	b := w.Wait([]string{"q"})
	c := w.Wait([]string{"q"})
	b.Release() // never woken: it just leaves the line
	if w.Waiting("q") != 2 {
		t.Fatalf("waiting %d after a release, want 2", w.Waiting("q"))
	}
	w.Signal("q", 1)
	a.Release() // woken, leaves without leasing: passes it on
	if !isClosed(c) {
		t.Error("a released woken waiter did not pass its wake-up on")
	}
	if isClosed(b) {
		t.Error("a released waiter was woken")
	}
}

func TestWakeupsRelayAndAll(t *testing.T) {
	w := NewWakeups()
	a := w.Wait([]string{"q", "r"})
	b := w.Wait([]string{"q"})
	c := w.Wait([]string{"r"})
	a.Relay() // a full lease: one more waiter of each queue
	if !isClosed(a) || !isClosed(c) || isClosed(b) {
		t.Errorf("Relay woke a %v b %v c %v; want a (first on q) and c (first on r once a left)", isClosed(a), isClosed(b), isClosed(c))
	}
	d := w.Wait([]string{"s"})
	w.SignalAll()
	if !isClosed(b) || !isClosed(d) || w.Waiting("q")+w.Waiting("s") != 0 {
		t.Error("SignalAll left a waiter asleep")
	}
}

func TestParseWakeupMessage(t *testing.T) {
	for _, tt := range []struct {
		msg   string
		queue string
		n     int
	}{
		{WakeupMessage("emails", 3), "emails", 3},
		{WakeupMessage("a:b", 1), "a:b", 1}, // a queue name holding ':'
		{WakeupMessage("7:x", 2), "7:x", 2}, // and one that looks like a message
		{"0:emails", "emails", 0},           // every waiter
		{"emails", "emails", 0},             // an older replica's bare name
		{"a:b", "a:b", 0},                   // likewise, holding ':'
		{"-1:q", "-1:q", 0},                 // no count: a name
		{"99999999999999999999:q", "99999999999999999999:q", 0},
	} {
		q, n := ParseWakeupMessage(tt.msg)
		if q != tt.queue || n != tt.n {
			t.Errorf("ParseWakeupMessage(%q) = %q, %d; want %q, %d", tt.msg, q, n, tt.queue, tt.n)
		}
	}
}

// TestWakeupsSignalAfter: a timed signal wakes one waiter of its queue
// when it fires; a later one for the same queue gives way to an earlier
// one pending, and an earlier one replaces a later one.
func TestWakeupsSignalAfter(t *testing.T) {
	w := NewWakeups()
	a := w.Wait([]string{"q"})
	b := w.Wait([]string{"q"})
	w.SignalAfter("q", time.Hour)
	w.SignalAfter("q", time.Millisecond) // replaces the hour
	woken(t, a)                          // the test waits on the signal, not a sleep
	w.SignalAfter("q", time.Millisecond)
	w.SignalAfter("q", time.Hour) // an earlier one is pending: kept
	woken(t, b)
	w.mu.Lock()
	pending := len(w.timers)
	w.mu.Unlock()
	if pending != 0 {
		t.Errorf("%d timers pending after they fired, want 0", pending)
	}
}

// woken waits for wt's wake-up; 10 s only bounds a failure.
func woken(t *testing.T, wt *Waiter) {
	t.Helper()
	select {
	case <-wt.C():
	case <-time.After(10 * time.Second):
		t.Fatal("not woken within 10s")
	}
}

// A worker's deregistration wakes every poll of that worker, which can
// tell by WokenBy; SignalAll (a lost channel's fallback) wakes polls by
// their queues, never as if their worker had ended.
func TestWakeupsWorkerEnded(t *testing.T) {
	w := NewWakeups()
	ended := WorkerEnded("w")
	a := w.Wait([]string{"q", ended})
	b := w.Wait([]string{"r", ended})
	c := w.Wait([]string{"q", WorkerEnded("other")})
	w.Signal(ended, 0)
	if !isClosed(a) || !isClosed(b) || isClosed(c) {
		t.Fatalf("the worker's end woke a %v b %v c %v; want a and b", isClosed(a), isClosed(b), isClosed(c))
	}
	if a.WokenBy() != ended || b.WokenBy() != ended {
		t.Errorf("WokenBy = %q, %q; want %q", a.WokenBy(), b.WokenBy(), ended)
	}
	if ValidName(ended) {
		t.Errorf("%q is a valid queue name: a queue could be mistaken for it", ended)
	}
	for range 20 { // map order varies: every time, the queue wakes it
		d := w.Wait([]string{"s", WorkerEnded("x")})
		w.SignalAll()
		if !isClosed(d) || d.WokenBy() != "s" {
			t.Fatalf("SignalAll woke the poll by %q, want its queue s", d.WokenBy())
		}
	}
	if !isClosed(c) || c.WokenBy() != "q" {
		t.Errorf("SignalAll woke c by %q, want its queue q", c.WokenBy())
	}
}
