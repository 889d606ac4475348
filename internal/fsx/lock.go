package fsx

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLocked reports that another open file description holds the lock.
var ErrLocked = errors.New("lock held by another process")

// Lock is an flock(2) lock on a file that oo-claude owns (0600). The kernel
// releases it when the holder dies, so a crashed holder never wedges others.
type Lock struct {
	f    *os.File
	path string
}

func openLockFile(path string) (*os.File, error) {
	if err := MkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return openChecked("lock", path, os.O_RDWR|os.O_CREATE)
}

// TryLock takes an exclusive lock on path without waiting. It returns an
// error matching [ErrLocked] when another holder has it.
func TryLock(path string) (*Lock, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &fs.PathError{Op: "flock", Path: path, Err: ErrLocked}
		}
		return nil, &fs.PathError{Op: "flock", Path: path, Err: err}
	}
	return &Lock{f: f, path: path}, nil
}

// LockContext takes an exclusive lock on path, retrying until ctx ends
// (an error wrapping ctx.Err()). Contention on oo-claude's locks lasts
// microseconds (a ledger update), so the retry interval is short.
func LockContext(ctx context.Context, path string) (*Lock, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	if err := flockLoop(ctx, f, path, time.Time{}); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f, path: path}, nil
}

// File returns the locked file, for holders that keep state in it.
func (l *Lock) File() *os.File { return l.f }

// Unlock releases the lock and closes the file. It is safe to call twice.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}

// Holder returns the pid of a process that holds a flock(2) lock on path,
// as /proc/locks names it, or 0 when none is found (or /proc cannot say).
func Holder(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	// 1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF
	want := ":" + strconv.FormatUint(uint64(st.Ino), 10)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" || f[4] == "" || !strings.HasSuffix(f[5], want) {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}
