package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/tetherq/tether/store"
)

func TestUnavailable(t *testing.T) {
	t.Parallel()
	errDown := errors.New("driver: server is loading")
	down := func(err error) bool { return errors.Is(err, errDown) }
	live := context.Background()
	cancelled, cancel := context.WithCancel(live)
	cancel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	tests := []struct {
		name   string
		ctx    context.Context
		err    error
		marked bool
	}{
		{"nil", live, nil, false},
		{"another error", live, errors.New("syntax error"), false},
		{"a sentinel", live, fmt.Errorf("job x: %w", store.ErrNotFound), false},
		{"the driver says down", live, fmt.Errorf("lease: %w", errDown), true},
		{"connection refused", live, fmt.Errorf("lease: %w", refused), true},
		{"reset, unwrapped", live, syscall.ECONNRESET, true},
		{"reply cut short", live, fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"EOF", live, io.EOF, true},
		{"a deadline passed", live, fmt.Errorf("acquire: %w", context.DeadlineExceeded), true},
		{"the caller cancelled", live, fmt.Errorf("acquire: %w", context.Canceled), false},
		{"the caller cancelled, the driver saw a cut", cancelled, refused, false},
		{"the caller cancelled, the driver says down", cancelled, errDown, false},
	}
	for _, tt := range tests {
		got := store.Unavailable(tt.ctx, tt.err, down)
		if marked := errors.Is(got, store.ErrUnavailable); marked != tt.marked {
			t.Errorf("%s: Unavailable(%v) = %v, marked %v, want %v", tt.name, tt.err, got, marked, tt.marked)
		}
		if tt.err != nil && !errors.Is(got, tt.err) {
			t.Errorf("%s: Unavailable(%v) = %v, lost the cause", tt.name, tt.err, got)
		}
		if tt.err == nil && got != nil {
			t.Errorf("%s: Unavailable(nil) = %v", tt.name, got)
		}
	}
	once := store.Unavailable(live, io.EOF, down)
	if twice := store.Unavailable(live, once, down); twice != once {
		t.Errorf("marking twice: %v, want %v unchanged", twice, once)
	}
}
