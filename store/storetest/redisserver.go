package storetest

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
)

// RedisServer is a redis-server of a test's own, on a free port with its
// own directory, for what the shared one must not suffer: kill -9,
// restarts, outages, exact memory figures.
type RedisServer struct {
	t    testing.TB
	bin  string
	Dir  string
	Port int
	args []string
	cmd  *exec.Cmd
}

// StartRedis starts a redis-server with extra config args (such as
// "--appendonly", "yes"), killed at t's cleanup. Without the binary the
// test stops by Unavailable.
func StartRedis(t testing.TB, args ...string) *RedisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Unavailable(t, "redis-server is not installed", "scripts/redis.sh installs it")
	}
	s := &RedisServer{t: t, bin: bin, Dir: t.TempDir(), Port: freePort(t), args: args}
	s.Start()
	t.Cleanup(s.Kill9)
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

// URL is the server's redis:// URL, database 0.
func (s *RedisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port) }

// Start runs redis-server in the foreground, as a child of the test, and
// waits until it answers PING (after loading its AOF, if any). It starts
// it again, on the same port and directory, after Kill9.
func (s *RedisServer) Start() {
	s.t.Helper()
	args := append([]string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--dir", s.Dir,
		"--save", "", "--logfile", "redis.log"}, s.args...)
	s.cmd = exec.Command(s.bin, args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	o, _ := goredis.ParseURL(s.URL())
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
			log, _ := os.ReadFile(s.Dir + "/redis.log")
			s.t.Fatalf("redis-server on port %d did not answer: %v\n%s", s.Port, err, log)
		}
		time.Sleep(20 * time.Millisecond) // polling another process: no signal to wait on
	}
}

// Kill9 kills redis-server with SIGKILL: no shutdown, no final fsync.
func (s *RedisServer) Kill9() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}
