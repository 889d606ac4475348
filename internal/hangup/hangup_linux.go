package hangup

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Await returns nil when f's far end hangs up (the reader of a pipe or a
// socket is gone), ctx's error when ctx ends first, and ErrUnsupported
// when f is nil. A file that never hangs up (a regular file, a terminal
// that stays) waits for ctx. It starts no goroutine of its own: the poll
// is woken by a pipe written when ctx ends.
func Await(ctx context.Context, f *os.File) error {
	if f == nil {
		return ErrUnsupported
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("hangup: pipe: %w", err)
	}
	defer r.Close()
	stop := context.AfterFunc(ctx, func() { w.Close() })
	defer func() {
		if stop() {
			w.Close()
		}
	}()
	fds := []unix.PollFd{{Fd: int32(f.Fd())}, {Fd: int32(r.Fd()), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("hangup: poll: %w", err)
		}
		if fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
			return nil
		}
		if fds[0].Revents&unix.POLLNVAL != 0 {
			return fmt.Errorf("hangup: poll: %w", unix.EBADF)
		}
		if fds[1].Revents != 0 {
			return ctx.Err()
		}
	}
}
