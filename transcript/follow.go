package transcript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// Errors a Follower reports. Each comes wrapped in an *fs.PathError (Op "transcript follow") whose Path is
// the transcript; the Follower goes on after it (see Follower.Next).
var (
	// ErrTruncated: the transcript is now shorter than the offset the
	// Follower had read to (or than the offset it was asked to start
	// from). Rows may have been lost; the Follower goes on from the start
	// of the file as it is now.
	ErrTruncated = errors.New("transcript: truncated under the follower")
	// ErrReplaced: another file now stands at the transcript's path (it
	// was removed and recreated, or renamed over). The Follower goes on
	// from the start of the new file.
	ErrReplaced = errors.New("transcript: replaced under the follower")
	// ErrRowTooLong: a row grew past the Follower's bound (64 MiB unless
	// FollowOptions.MaxRow says less) without its "\n". It is not handed
	// over; the Follower goes on after its end.
	ErrRowTooLong = errors.New("transcript: row too long to follow")
)

// errZeroFollower is what Next returns on a Follower not made by Follow.
var errZeroFollower = errors.New("a zero Follower follows nothing; make one with Follow")

// followPoll is a Follower's default safety poll.
const followPoll = time.Second

// followMaxRow is a Follower's bound on one row when FollowOptions.MaxRow
// is 0.
const followMaxRow = 64 << 20

// FollowOptions tune Follow.
type FollowOptions struct {
	// Poll is the fallback timer: file events on the transcript's
	// directory wake the Follower (a lost event wakes it too), the timer
	// only stands in for a watch that could not be set up (the Follower
	// then looks at a tenth of it). 0 means one second.
	Poll time.Duration
	// MaxRow bounds the bytes held for one row: a row longer than MaxRow
	// is reported once (ErrRowTooLong) and skipped, never held whole. 0
	// (or less) means 64 MiB. A reader that needs only small rows (a
	// watcher) sets less, which bounds its memory.
	MaxRow int
}

// Line is one complete row of a transcript.
type Line struct {
	// Raw is the row without its "\n" (and without a trailing "\r"); parse
	// it as JSON (one object). It is the caller's to keep.
	Raw []byte
	// Offset is where the row starts in the file, End where the next one
	// does (after the "\n").
	Offset, End int64
}

// A Follower hands over, in order, each complete row appended to one
// transcript after an offset. It reads only the new bytes, is woken by
// file events on the transcript's directory (or, while that directory does
// not exist, on its parent), never locks or writes, and never follows a
// symlink or blocks on a FIFO. A Follower is not safe for concurrent use.
// Make one with Follow: the zero Follower, like a nil one, follows nothing
// (Next is an error, Offset 0, Close nil).
type Follower struct {
	ctx    context.Context
	path   string
	dir    string
	poll   time.Duration
	maxRow int

	waker *fsx.Waker // armed at the first wait

	f       *os.File
	fi      os.FileInfo // f's identity, to notice a replacement
	started bool        // the file was opened once (from was checked)
	off     int64       // file offset of buf[0]
	buf     []byte
	skip    bool // discarding the rest of a row past maxRow
	err     error
	closed  bool
}

// Follow returns a Follower for the transcript at path, starting at byte
// offset from: take it from Witness.Mark (or the size before a send) so only the
// rows appended since are handed over. A row that straddles from is left
// out. The transcript need not exist yet: a brand-new session's transcript
// is waited for. ctx bounds the Follower's life as a whole (Next also takes
// its own); call Close to release its watch.
func Follow(ctx context.Context, path string, from int64, opts FollowOptions) *Follower {
	if ctx == nil {
		ctx = context.Background()
	}
	f := &Follower{ctx: ctx, path: filepath.Clean(path), poll: opts.Poll, maxRow: followMaxRow, off: max(from, 0)}
	if opts.MaxRow > 0 {
		f.maxRow = opts.MaxRow
	}
	f.dir = filepath.Dir(f.path)
	if f.poll <= 0 {
		f.poll = followPoll
	}
	return f
}

// Offset is where the next row the Follower hands over starts: the End of
// the last Line returned (or from, before the first). Rows before it were
// read.
func (f *Follower) Offset() int64 {
	if f == nil {
		return 0
	}
	return f.off
}

// Next returns the next complete row, blocking until one is appended, ctx
// or Follow's context ends (their error is returned), or the Follower is
// closed. Rows already written are returned even when ctx has ended, so a
// done ctx makes Next a non-blocking look. A row still being written (no
// "\n" yet) is held until it is complete, never handed over in part.
//
// Truncation and replacement are reported, never skipped: Next returns an
// error matching ErrTruncated or ErrReplaced once, and the next call goes
// on from the start of the file as it is now. A symlink or other
// non-regular file at the path is ErrNotRegular and, like a failing read,
// ends the Follower: every later call returns the same error.
func (f *Follower) Next(ctx context.Context) (Line, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if f == nil || f.ctx == nil { // nil or zero, not made by Follow: it follows nothing
		return Line{}, fmt.Errorf("transcript follow: %w", errZeroFollower)
	}
	for {
		if f.err != nil {
			return Line{}, f.err
		}
		if f.closed {
			return Line{}, pathError("follow", f.path, os.ErrClosed)
		}
		if l, ok := f.line(); ok {
			return l, nil
		}
		grew, err := f.read()
		if err != nil {
			return Line{}, err
		}
		if grew {
			continue
		}
		if err := ctx.Err(); err != nil {
			return Line{}, err
		}
		if err := f.ctx.Err(); err != nil {
			return Line{}, err
		}
		if f.waker == nil {
			// Armed first, read second: what was appended before the
			// watch began is read before waiting.
			f.waker = fsx.NewWaker(max(f.poll/10, time.Millisecond), f.path)
			continue
		}
		select {
		case <-ctx.Done():
		case <-f.ctx.Done():
		case <-f.waker.C:
		}
	}
}

// line cuts the next complete row out of buf.
func (f *Follower) line() (Line, bool) {
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			return Line{}, false
		}
		raw := f.buf[:i]
		start := f.off
		f.off += int64(i) + 1
		f.buf = f.buf[i+1:]
		if f.skip {
			f.skip = false
			continue
		}
		raw = bytes.TrimSuffix(raw, []byte{'\r'})
		if len(raw) == 0 {
			continue
		}
		return Line{Raw: bytes.Clone(raw), Offset: start, End: f.off}, true
	}
}

// read appends what the file holds past buf to buf. It reports whether buf
// grew. A missing file is not an error: it is yet to be created.
func (f *Follower) read() (bool, error) {
	if f.f == nil {
		ok, err := f.open()
		if !ok || err != nil {
			return false, err
		}
	} else if err := f.checkReplaced(); err != nil {
		return false, err
	}
	fi, err := f.f.Stat()
	if err != nil {
		return false, f.fail("read", err)
	}
	end := f.off + int64(len(f.buf))
	size := fi.Size()
	if size < end {
		f.restart(0)
		return false, pathError("follow", f.path, ErrTruncated)
	}
	if size == end {
		return false, nil
	}
	n := min(size-end, transcriptfile.DefaultChunkSize)
	old := len(f.buf)
	f.buf = append(f.buf, make([]byte, n)...)
	m, err := f.f.ReadAt(f.buf[old:], end)
	f.buf = f.buf[:old+m]
	if err != nil && !errors.Is(err, io.EOF) {
		return false, f.fail("read", err)
	}
	if f.skip && bytes.IndexByte(f.buf, '\n') < 0 {
		// The rest of a row being skipped: nothing to hold.
		f.off += int64(len(f.buf))
		f.buf = f.buf[:0]
		return m > 0, nil
	}
	if len(f.buf) > f.maxRow && bytes.IndexByte(f.buf, '\n') < 0 {
		// Past the bound without a row end: drop what is held, report it,
		// and discard up to the row's "\n".
		f.off += int64(len(f.buf))
		f.buf = f.buf[:0]
		wasSkipping := f.skip
		f.skip = true
		if !wasSkipping {
			return false, pathError("follow", f.path, ErrRowTooLong)
		}
	}
	return m > 0, nil
}

// open opens the transcript the first time it exists (or again after a
// replacement).
func (f *Follower) open() (bool, error) {
	fd, fi, err := openRegular(f.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, f.fail("open", err)
	}
	f.f = fd
	f.fi = fi
	if f.started {
		return true, nil
	}
	f.started = true
	if fi.Size() < f.off {
		f.restart(0)
		return false, pathError("follow", f.path, ErrTruncated)
	}
	if f.off > 0 {
		// A row that straddles from is left out.
		var b [1]byte
		if _, err := fd.ReadAt(b[:], f.off-1); err != nil {
			return false, f.fail("read", err)
		}
		f.skip = b[0] != '\n'
	}
	return true, nil
}

// checkReplaced reports ErrReplaced once when another file stands at the
// path. While the path is missing the open file is kept.
func (f *Follower) checkReplaced() error {
	fi, err := os.Lstat(f.path)
	if err != nil {
		return nil
	}
	if os.SameFile(fi, f.fi) {
		return nil
	}
	f.restart(0)
	return pathError("follow", f.path, ErrReplaced)
}

// restart drops the open file and what is held, to go on at off.
func (f *Follower) restart(off int64) {
	if f.f != nil {
		f.f.Close()
		f.f = nil
	}
	f.off, f.buf, f.skip = off, f.buf[:0], false
}

func (f *Follower) fail(op string, err error) error {
	if !ours(err) {
		err = pathError(op, f.path, err)
	}
	f.err = err
	return err
}

// Close releases the Follower's file and watch, and returns once the
// watch is released. It is safe to call more than once; after Drop it
// does nothing. Next after Close returns an error matching os.ErrClosed.
func (f *Follower) Close() error { return f.release(false) }

// Drop is Close without its wait: the kernel retires a file watch after a
// grace period (milliseconds), which Close waits for; Drop has it released
// on a goroutine of its own, so a caller with more work goes on at once
// (a process that exits meanwhile still waits for what is left of it).
// The file is closed before it returns. It is safe to call more than once,
// and after Close.
func (f *Follower) Drop() error { return f.release(true) }

func (f *Follower) release(drop bool) error {
	if f == nil || f.closed {
		return nil
	}
	f.closed = true
	if f.f != nil {
		f.f.Close()
		f.f = nil
	}
	if drop {
		f.waker.Drop()
	} else {
		f.waker.Close()
	}
	f.waker = nil
	return nil
}
