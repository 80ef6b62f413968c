package api

import (
	"net"
	"net/netip"
	"sync"
)

// DefaultMaxConnsPerClient is cmd/server's default for LimitConns: far
// above what one worker host or a 1,000-poll benchmark opens, low enough
// that one address cannot hold more than about 100 MB of idle
// connections or exhaust the process's file descriptors.
const DefaultMaxConnsPerClient = 4096

// LimitConns returns ln allowing at most perClient connections open at
// once from one client (clientOf). A connection over the cap is closed as
// soon as it is accepted, before it costs a goroutine or a buffer, and
// counted in tether_connections_refused_total. perClient <= 0 returns ln
// as it is. Behind a proxy or a NAT every client has the proxy's address.
func (a *API) LimitConns(ln net.Listener, perClient int) net.Listener {
	if perClient <= 0 {
		return ln
	}
	return &connLimiter{Listener: ln, max: perClient, open: map[netip.Prefix]int{}, a: a}
}

// clientOf is the key of an address in per-client limits: the address for
// IPv4, its /64 for IPv6, since one host often holds a whole /64 and could
// otherwise take a fresh address for each connection or request.
func clientOf(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

type connLimiter struct {
	net.Listener
	max  int
	a    *API
	mu   sync.Mutex
	open map[netip.Prefix]int
}

// Accept returns the next connection within its client's cap, closing the
// ones over it on the way.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		var key netip.Prefix
		if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			key = clientOf(ta.AddrPort().Addr())
		}
		if l.take(key) {
			return &limitedConn{Conn: c, release: func() { l.give(key) }}, nil
		}
		l.a.metrics.connsRefused.Inc()
		_ = c.Close()
	}
}

func (l *connLimiter) take(key netip.Prefix) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key] >= l.max {
		return false
	}
	l.open[key]++
	return true
}

func (l *connLimiter) give(key netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
}

// limitedConn gives its slot back on its first Close; net/http may close
// a connection more than once.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
