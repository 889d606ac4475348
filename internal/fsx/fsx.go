// Package fsx is the file plumbing every oo-claude package shares: private
// directories, whole-line appends, atomic replacement, the one checked open
// and the ownership check.
//
// Guarantees: an appended line is written with a single write(2) on a
// descriptor opened with O_APPEND, so concurrent writers never interleave
// inside a line, and it never joins a torn last line (a file that does not
// end in a newline gets one first, in the same write); a replaced file is
// either the old or the new content, never a mix; files are created 0600 and
// directories 0700; a symlink at a path this package writes to or opens is
// refused with [ErrSymlink]; every open is non-blocking (O_NONBLOCK, O_NOCTTY)
// and checked with fstat, so a FIFO, socket, device node or directory at a
// path is refused with [ErrNotRegular] at once, never waited on; a file that
// another user owns, or that others can write, is refused with
// [ErrUntrusted] (see [CheckTrust]), so nothing another user planted is read,
// appended to or locked.
package fsx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// ErrSymlink reports a symbolic link where a regular file or directory was
// expected. Nothing is written through it.
var ErrSymlink = errors.New("refusing to follow a symlink")

// ErrNotRegular reports a path that exists but is not a regular file (a
// FIFO, socket, device node or directory). Nothing is read from or written
// through it.
var ErrNotRegular = errors.New("not a regular file")

// openFlags are added to every open: never follow a symlink at the last
// element, never block on a FIFO or device, never acquire a controlling
// terminal, never leak the descriptor into a child.
const openFlags = unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

// FileMode and DirMode are the modes of everything oo-claude creates.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// MkdirPrivate creates dir (and its parents) with mode 0700 if it is absent.
// An existing dir is left as it is, but a symlink at dir is refused.
func MkdirPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "mkdir", Path: dir, Err: ErrSymlink}
	case err == nil && !fi.IsDir():
		return &fs.PathError{Op: "mkdir", Path: dir, Err: unix.ENOTDIR}
	case err == nil:
		return nil
	}
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return err
	}
	return nil
}

// OpenAppend opens path for appending, creating it 0600 (and its directory
// 0700) when absent. A symlink at path, anything but a regular file, or a
// file that is not trusted ([CheckTrust] for the effective uid) is refused.
// The descriptor is also readable, so [AppendLineTo] can see whether the
// file ends in a newline.
func OpenAppend(path string) (*os.File, error) {
	if err := MkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return openChecked("append", path, os.O_RDWR|os.O_APPEND|os.O_CREATE)
}

// openChecked is the one checked open: a path that exists and is not a
// regular file is refused before it is opened (so a device is never opened),
// the open itself cannot follow a symlink or block, and fstat checks the
// opened file again (a swap between the two checks is caught): it must be
// regular and trusted by the effective uid ([CheckTrust]). O_NONBLOCK is
// cleared again on the regular file, so reads and writes behave as usual.
func openChecked(op, path string, flag int) (*os.File, error) {
	return openCheckedAs(op, path, flag, os.Geteuid())
}

func openCheckedAs(op, path string, flag, uid int) (*os.File, error) {
	if err := refuseBeforeOpen(op, path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag|openFlags, FileMode)
	if err != nil {
		return nil, wrapOpenErr(op, path, err)
	}
	fi, err := checkRegular(f, op, path)
	if err == nil {
		err = CheckTrust(path, fi, uid)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := setBlocking(f); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: op, Path: path, Err: err}
	}
	return f, nil
}

// refuseBeforeOpen refuses a path that exists and is not a regular file
// (a symlink: ErrSymlink; anything else: ErrNotRegular), so that it is never
// opened.
func refuseBeforeOpen(op, path string) error {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &fs.PathError{Op: op, Path: path, Err: ErrSymlink}
		}
		if !fi.Mode().IsRegular() {
			return &fs.PathError{Op: op, Path: path, Err: ErrNotRegular}
		}
	}
	return nil
}

// setBlocking clears O_NONBLOCK on f (a regular file, so this changes no
// semantics the Go runtime relies on: regular files are never polled).
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		var fl int
		if fl, serr = unix.FcntlInt(fd, unix.F_GETFL, 0); serr == nil && fl&unix.O_NONBLOCK != 0 {
			_, serr = unix.FcntlInt(fd, unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
	}); err != nil {
		return err
	}
	return serr
}

// AppendLine appends line and a trailing newline to path in one write and
// returns the byte offset at which the line starts. The offset comes from the
// descriptor's position after the O_APPEND write, so it is exact even while
// other processes append to the same file.
func AppendLine(path string, line []byte) (offset int64, err error) {
	f, err := OpenAppend(path)
	if err != nil {
		return 0, err
	}
	defer f.Close() // releases the lock
	// The torn check and the write hold the file's exclusive flock, so a
	// line another appender is writing (a write is copied page by page,
	// and the size grows before its last byte lands) is never taken for a
	// torn one.
	if err := lockAppend(f, path); err != nil {
		return 0, err
	}
	return AppendLineTo(f, path, line)
}

// lockAppend takes the exclusive flock on f (opened by [OpenAppend]) that
// appenders hold while they check for a torn line and write, waiting at most
// appendLockWait. Closing f releases it.
func lockAppend(f *os.File, path string) error { return flockBounded(f, path) }

// AppendLineTo is AppendLine on a descriptor opened by [OpenAppend]. The
// caller holds the exclusive flock on f (lockAppend, or its own protocol's)
// whenever other processes may append.
//
// When the file does not end in a newline (a writer died mid-line, or a
// short write left a torn line), the write starts with one, so the new line
// is never glued onto the torn one: readers skip the torn line and read this
// one. Two appenders racing past the same torn line leave an empty line,
// which readers skip too. A short write is an error matching
// [io.ErrShortWrite].
func AppendLineTo(f *os.File, path string, line []byte) (int64, error) {
	return AppendLineMarkingTorn(f, path, line, nil)
}

// AppendLineMarkingTorn is [AppendLineTo] for a file whose readers cannot
// tell a torn line from a whole one by its bytes alone (an inbox of plain
// text lines, where the start of a line reads as a line): a torn line is
// ended with mark, then the newline, so that it reads as what mark makes
// it (a NUL: a line no reader delivers).
func AppendLineMarkingTorn(f *os.File, path string, line, mark []byte) (int64, error) {
	lead := 0
	if torn, err := endsTorn(f); err != nil {
		return 0, &fs.PathError{Op: "read", Path: path, Err: err}
	} else if torn {
		lead = len(mark) + 1
	}
	buf := make([]byte, lead+len(line)+1)
	if lead > 0 {
		copy(buf, mark)
		buf[lead-1] = '\n'
	}
	copy(buf[lead:], line)
	buf[len(buf)-1] = '\n'
	n, err := f.Write(buf)
	if err != nil {
		return 0, &fs.PathError{Op: "write", Path: path, Err: err}
	}
	if n != len(buf) {
		return 0, &fs.PathError{Op: "write", Path: path, Err: io.ErrShortWrite}
	}
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, &fs.PathError{Op: "seek", Path: path, Err: err}
	}
	return end - int64(len(buf)-lead), nil
}

// appendLockWait bounds how long an append waits for other appenders: each
// holds the file's flock for one write, so a longer wait means a holder that
// is not an appender of ours, and the append fails instead of hanging.
const appendLockWait = 2 * time.Second

func flockBounded(f *os.File, path string) error {
	return FlockUntil(f, path, time.Now().Add(appendLockWait))
}

// FlockUntil takes the exclusive flock(2) lock on f (opened on path, which
// only names it in errors), retrying while another open file description
// holds it, until deadline. Past the deadline the error matches
// [ErrLocked].
func FlockUntil(f *os.File, path string, deadline time.Time) error {
	return flockLoop(context.Background(), f, path, deadline)
}

// flockLoop is the module's one bounded lock loop, under FlockUntil and
// LockContext: it retries the non-blocking flock(2) while another open
// file description holds the lock, until deadline (none when zero) or
// until ctx ends (an error wrapping ctx.Err()). Every holder of these
// locks holds them for one write or one ledger update, so the retry
// starts at 200 µs and backs off to 2 ms.
func flockLoop(ctx context.Context, f *os.File, path string, deadline time.Time) error {
	wait := 200 * time.Microsecond
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			return &fs.PathError{Op: "flock", Path: path, Err: err}
		case !deadline.IsZero() && time.Now().After(deadline):
			return &fs.PathError{Op: "flock", Path: path, Err: ErrLocked}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return &fs.PathError{Op: "flock", Path: path, Err: ctx.Err()}
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Millisecond)
	}
}

// endsTorn reports whether f is non-empty and its last byte is not '\n'.
func endsTorn(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() == 0 {
		return false, nil
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], fi.Size()-1); err != nil {
		if errors.Is(err, io.EOF) { // truncated under us: nothing to join
			return false, nil
		}
		return false, err
	}
	return b[0] != '\n', nil
}

// WriteFileAtomic replaces path with data: a temporary file in the same
// directory (0600), fsync, rename. Readers see the old or the new content.
// A target that exists and is not a regular file (a symlink, FIFO, socket,
// device node or directory) is refused and left as it is.
func WriteFileAtomic(path string, data []byte) error { return writeFileAtomic(path, data, true) }

// WriteAdvisoryAtomic is WriteFileAtomic without the fsync, for state
// that is rewritten often and that nobody needs after a machine crash (the
// doorman's heartbeat: a machine that crashed has no live doorman; its
// attempt record, written before each door write: the crash ended the
// receiver too); a process killed loses none of it.
// Readers still see the old or the new content, never a torn one. Nor
// does it flush by the back door: on Linux the new file is swapped in
// (renameat2 RENAME_EXCHANGE) and the old one removed under the
// temporary name, because a rename over an existing file makes ext4
// (auto_da_alloc) write the new file's data out at once, which costs a
// millisecond of disk wait per write; a heartbeat replaced within the
// kernel's writeback delay then never reaches the disk at all.
func WriteAdvisoryAtomic(path string, data []byte) error { return writeFileAtomic(path, data, false) }

func writeFileAtomic(path string, data []byte, sync bool) error {
	dir := filepath.Dir(path)
	if err := MkdirPrivate(dir); err != nil {
		return err
	}
	if err := replaceable(path); err != nil {
		return err
	}
	tmp, err := createTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := tmp.Chmod(FileMode); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := replaceable(path); err != nil { // checked again: the write took time
		return err
	}
	if sync {
		// fsynced: a rename over the old file has nothing left to flush.
		err = os.Rename(name, path)
	} else {
		err = swapIn(name, path)
	}
	if err != nil {
		return err
	}
	ok = true
	return nil
}

// createTemp creates a new file (0600, without following a symlink) named
// prefix and a random suffix in dir, like os.CreateTemp, but as a blocking
// descriptor that the runtime does not try to put in its poller (a regular
// file cannot be polled: the attempt costs five system calls a file).
func createTemp(dir, prefix string) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		fd, err := unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(FileMode))
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "createtemp", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}

// CheckReplaceable reports whether [WriteFileAtomic] would replace path: nil
// when it is absent or a regular file, an error matching [ErrSymlink] or
// [ErrNotRegular] otherwise. Callers check a target before the work whose
// result goes there.
func CheckReplaceable(path string) error { return replaceable(path) }

// replaceable refuses a path that exists and is not a regular file.
func replaceable(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "replace", Path: path, Err: ErrSymlink}
	case !fi.Mode().IsRegular():
		return &fs.PathError{Op: "replace", Path: path, Err: ErrNotRegular}
	}
	return nil
}

// OpenRead opens path for reading without following a symlink at its last
// element and without blocking. It refuses anything but a regular file with
// an error matching [ErrSymlink] or [ErrNotRegular], and a file another user
// owns or others can write with one matching [ErrUntrusted]; a missing file
// matches [fs.ErrNotExist].
func OpenRead(path string) (*os.File, error) {
	return openChecked("open", path, os.O_RDONLY)
}

// ReadFile reads a whole regular file without following a symlink.
func ReadFile(path string) ([]byte, error) {
	f, err := OpenRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func checkRegular(f *os.File, op, path string) (fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: path, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: op, Path: path, Err: ErrNotRegular}
	}
	return fi, nil
}

// wrapOpenErr names why an open failed: ELOOP from O_NOFOLLOW is a symlink;
// ENXIO (a FIFO without a reader, a socket), EISDIR and ENODEV (a device
// without a driver) are files that are not regular.
func wrapOpenErr(op, path string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP):
		return &fs.PathError{Op: op, Path: path, Err: ErrSymlink}
	case errors.Is(err, unix.ENXIO), errors.Is(err, unix.EISDIR), errors.Is(err, unix.ENODEV), errors.Is(err, unix.EOPNOTSUPP):
		return &fs.PathError{Op: op, Path: path, Err: ErrNotRegular}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}
