package storetest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a TCP proxy between a store and its server, for tests that take
// the network away from a shared server (the test Postgres) that they must
// not stop. It forwards until Cut or Stall, and again after Restore.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	mode   proxyMode
	conns  map[net.Conn]struct{} // both ends of every forwarded pair, and the held
}

type proxyMode int

const (
	forwarding proxyMode = iota
	refusing             // Cut: close what comes in
	silent               // Stall: take it in and say nothing
)

// NewProxy listens on a free port of 127.0.0.1 and forwards to target
// (host:port); t's cleanup closes it and every connection through it.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.dropAll()
	})
	return p
}

// Addr is the proxy's host:port, to put in the store's URL.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every connection through the proxy and closes each new one at
// once, as a server that went away: the client sees resets and EOFs.
func (p *Proxy) Cut() { p.set(refusing) }

// Stall closes every connection through the proxy and holds each new one
// open without a byte in either direction, as a server that hangs: the
// client sees only its own timeouts.
func (p *Proxy) Stall() { p.set(silent) }

// Restore forwards new connections again; those Stall held are closed.
func (p *Proxy) Restore() { p.set(forwarding) }

// set changes the mode and closes every connection of the old one.
func (p *Proxy) set(m proxyMode) {
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
	p.dropAll()
}

func (p *Proxy) dropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		mode := p.mode
		if mode == silent {
			p.conns[c] = struct{}{}
		}
		p.mu.Unlock()
		switch mode {
		case refusing:
			c.Close()
		case forwarding:
			go p.forward(c)
		}
	}
}

func (p *Proxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.mode != forwarding { // cut while dialing
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done // one side ended: end both
	c.Close()
	s.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}
