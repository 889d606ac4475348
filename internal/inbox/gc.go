package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"golang.org/x/sys/unix"
)

// The inbox's removal protocol. A sender appends while it holds the
// exclusive flock on the inbox file it opened (exclusive, not shared: the
// torn-line check before its write must not see another sender's line in
// progress, and a shared lock would have to be converted, which Linux does
// by dropping it first), and only after checking that the path
// still names that file; a collector removes an inbox only while it holds
// the exclusive flock on it (and the doorman's lock), after judging it
// under that lock. So a line is either in the file the collector judged
// (and the judgement saw it: the collector keeps the inbox) or appended
// after the removal to a new inbox the sender created: never written into a
// removed file.

// ErrInUse reports an inbox that a doorman holds or that a sender is
// appending to; nothing was removed.
var ErrInUse = errors.New("inbox in use")

// lockWait bounds how long a sender waits for a collector's exclusive lock
// (held for one pass over the inbox) before it reports an error.
const lockWait = 10 * time.Second

// AppendInbox appends line and its newline to the inbox at path (one
// O_APPEND write, creating the file 0600 when absent) under the inbox's
// removal protocol, and returns the offset at which the line starts. Every
// writer of an inbox uses it, so that [RemoveInbox] never removes a file a
// line is being written into.
//
// An inbox that ends in a torn line (a write that stopped short: a full
// disk, a file size limit) gets TornMark and a newline before the line, in
// the same write: the torn line's start would read as a line of its own,
// a cut-off instruction; with the mark the doorman refuses it
// ([inboxv1.ReasonTorn]) and delivers the line after it.
func AppendInbox(path string, line []byte) (int64, error) {
	deadline := time.Now().Add(lockWait)
	for {
		f, err := fsx.OpenAppend(path)
		if err != nil {
			return 0, err
		}
		ok, err := lockAppend(f, path, deadline)
		if err != nil {
			f.Close()
			return 0, err
		}
		if !ok { // removed or replaced while we waited: open the new one
			f.Close()
			continue
		}
		off, err := fsx.AppendLineMarkingTorn(f, path, line, TornMark)
		f.Close() // releases the lock
		return off, err
	}
}

// TornMark ends a torn line of an inbox (AppendInbox): a NUL, which no
// sender writes (the line rules refuse it), so a line that ends in one
// was torn, and a doorman of any version refuses it.
var TornMark = []byte{0}

// lockAppend takes the exclusive lock on f, waiting (bounded by deadline)
// while a collector or another sender holds it, and reports whether path
// still names f once it holds it.
func lockAppend(f *os.File, path string, deadline time.Time) (bool, error) {
	if err := fsx.FlockUntil(f, path, deadline); errors.Is(err, fsx.ErrLocked) {
		return false, &fs.PathError{Op: "flock", Path: path, Err: fmt.Errorf("%w: locked for more than %s", ErrInUse, lockWait)}
	} else if err != nil {
		return false, err
	}
	return samePath(f, path)
}

// samePath reports whether path names the file f is open on.
func samePath(f *os.File, path string) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	pi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}

// RemoveInbox removes one session's inbox files (the inbox, .ack, .offset,
// .doorman.attempt, .doorman.json and .doorman.lock) when judge, called while nothing can be
// appended to the inbox and no doorman runs for it, returns true. It returns
// the paths it removed. An inbox a doorman holds or that a sender is
// appending to is [ErrInUse]; a file that is not there is skipped. When the
// inbox itself does not exist, only the other files are removed (an inbox
// created after the judgement is never removed unjudged).
func RemoveInbox(files inboxv1.Files, judge func() (bool, error)) ([]string, error) {
	_, lerr := os.Lstat(files.Lock)
	hadLock := lerr == nil // else TryLock creates it: ours, not a doorman's file
	dl, err := fsx.TryLock(files.Lock)
	if errors.Is(err, fsx.ErrLocked) {
		return nil, fmt.Errorf("%s: %w: a doorman holds %s", files.Inbox, ErrInUse, files.Lock)
	}
	if err != nil {
		return nil, err
	}
	defer dl.Unlock()

	var inbox *os.File
	f, err := fsx.OpenRead(files.Inbox)
	switch {
	case err == nil:
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s: %w: a sender is appending", files.Inbox, ErrInUse)
			}
			return nil, &fs.PathError{Op: "flock", Path: files.Inbox, Err: err}
		}
		same, err := samePath(f, files.Inbox)
		if err != nil {
			return nil, err
		}
		if !same {
			return nil, fmt.Errorf("%s: %w: replaced while it was judged", files.Inbox, ErrInUse)
		}
		inbox = f
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	ok, err := judge()
	if err != nil || !ok {
		if !hadLock {
			_ = os.Remove(files.Lock)
		}
		return nil, err
	}
	var removed []string
	rm := func(path string) error {
		err := os.Remove(path)
		switch {
		case err == nil:
			removed = append(removed, path)
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		return nil
	}
	// The bookkeeping first, then the inbox: a sender that waited for our
	// lock creates a new inbox that no stale offset or ack describes.
	paths := []string{files.Offset, files.Ack, files.Attempt}
	if inbox != nil {
		paths = append(paths, files.Inbox)
	}
	paths = append(paths, files.Heartbeat)
	if hadLock {
		paths = append(paths, files.Lock)
	} else {
		_ = os.Remove(files.Lock)
	}
	var errs []error
	for _, p := range paths {
		if err := rm(p); err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}
