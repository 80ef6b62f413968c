package redis_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store/storetest"
)

// server is a redis-server of a test's own, on a free port with its own
// directory, for what the shared one must not suffer: kill -9, restarts,
// exact memory figures.
type server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	args []string
	cmd  *exec.Cmd
}

// startServer starts a redis-server with extra config args (such as
// "--appendonly", "yes"). Without the binary the test skips, except on CI.
func startServer(t testing.TB, args ...string) *server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		storetest.Unavailable(t, "redis-server is not installed", "scripts/redis.sh installs it")
	}
	s := &server{t: t, bin: bin, dir: t.TempDir(), port: freePort(t), args: args}
	s.start()
	t.Cleanup(s.kill)
	return s
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *server) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

// start runs redis-server in the foreground, as a child of the test, and
// waits until it answers PING (after loading its AOF, if any).
func (s *server) start() {
	s.t.Helper()
	args := append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--logfile", "redis.log"}, s.args...)
	s.cmd = exec.Command(s.bin, args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	o, _ := goredis.ParseURL(s.url())
	for _, a := range s.args {
		if a == "--requirepass" {
			return // the caller knows the password; started is enough
		}
	}
	c := goredis.NewClient(o)
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(s.dir + "/redis.log")
			s.t.Fatalf("redis-server on port %d did not answer: %v\n%s", s.port, err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill9 kills redis-server with SIGKILL: no shutdown, no final fsync.
func (s *server) kill9() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

func (s *server) kill() { s.kill9() }
