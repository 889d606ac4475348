package doorman

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/internal/ids"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/transcript"
)

// readPiece is how much one read adds to the window.
const readPiece = 256 << 10

// longScan is the scan of a line longer than readChunk, resumable across
// wake-ups: the hash so far and where the next read starts.
type longScan struct {
	start int64
	next  int64
	h     hash.Hash
}

// follower reads one inbox file and handles its lines.
type follower struct {
	d     *Doorman
	files inboxv1.Files
	id    identity
	pacer *pacer

	f      *os.File
	ino    uint64
	gen    string // the file's generation (inboxv1.Ack.Gen): acks and attempts of another one do not count
	pos    int64  // the offset of the next unhandled byte
	win    []byte // bytes read from pos on are win[wstart:]
	wstart int
	scan   *longScan
	acked  map[int64]string // line_offset → sha256 of acks for the current inode and generation at or after the start
	piece  []byte

	// seen is the file's size and modification time at the last look:
	// the same size with another time is a rewrite (an append only grows
	// the file), unless the file's events say nothing was written since
	// (a touch, or an append that failed for want of space, which sets
	// the time and writes nothing): writesAtLook is the watcher's count of
	// writes (fsx.Waker.Writes) read before that look.
	seen         fileLook
	writesAtLook int64

	attempt *inbox.Attempt // the last door write's record, when it is the current line's
	onDisk  diskAttempt    // the attempt file's record (recordedAttempt)

	// tf follows the session's transcript at tfPath for the confirmation,
	// kept from line to line while it can be (transcriptAt).
	tf      *transcript.Follower
	tfPath  string
	tfCtx   context.Context
	markErr error // the last reason the transcript could not be located (logged once)
	located locatedTranscript

	watcher *fsx.Waker
	wake    <-chan struct{} // nil without file events: the safety poll alone

	// The identity is worked out again only when it may have changed
	// (recheckIdentity): with idEvents, the owner's registry files wake
	// regWake and the exits of the owner and of every process between it
	// and this one are events (exits); idDirty says one came. idLook is
	// the owner's registry files at the last identify.
	idEvents bool
	// rowPath and keyPath are the owner's registry files (ownerFiles).
	rowPath, keyPath string
	regWaker         *fsx.Waker
	regWake          <-chan struct{}
	exits            []*fsx.ProcExit
	idDirty          atomic.Bool
	idLook           ownerLook
	// pollOnBeat: the heartbeat loop pokes the follower once an interval,
	// its safety poll (serve sets it when the two intervals are the same).
	pollOnBeat bool
	pokes      chan struct{} // the heartbeat's beats and the exits: at most one waits
	wg         sync.WaitGroup
}

// fileLook is a file's size and modification time at one look.
type fileLook struct {
	ok   bool
	size int64
	mod  time.Time
}

func lookAt(fi fs.FileInfo) fileLook { return fileLook{ok: true, size: fi.Size(), mod: fi.ModTime()} }

// lineKind says what next found.
type lineKind int

const (
	noLine   lineKind = iota // nothing complete yet
	fullLine                 // a complete line in line
	longLine                 // a complete line longer than readChunk; only its sha256 is known
)

func newFollower(d *Doorman, files inboxv1.Files, id identity) (*follower, error) {
	fl := &follower{d: d, files: files, id: id, pacer: newPacer(d.o.guard, d.o.Host.PID, d.o.noPacing), piece: make([]byte, readPiece), pokes: make(chan struct{}, 1)}
	// Watch the directory first, so no append between the read and the
	// watch is missed.
	if !d.o.pollOnly { // pollOnly: the benchmark's poll follower
		fl.watchInbox()
		fl.idEvents = fl.watchRegistry() && fl.watchOwner()
	}
	fl.idDirty.Store(true) // id was worked out before the watches
	// The previous heartbeat's inode tells a file replaced while no
	// doorman ran: read it before this doorman's first heartbeat.
	prevIno := uint64(0)
	if hb, err := inbox.ReadHeartbeat(files.Heartbeat); err == nil {
		prevIno = hb.Inode
	}
	off, offErr := inbox.ReadOffset(files.Offset)
	writes, _ := fl.watcher.Writes()
	f, fi, err := openFollowed(files.Inbox)
	if err != nil {
		fl.close()
		return nil, err
	}
	fl.f, fl.ino, fl.seen, fl.writesAtLook = f, inodeOf(fi), lookAt(fi), writes
	fl.pos = fl.resume(prevIno, off, offErr, fi)
	d.update(func(s *Status) { s.Offset, s.Inode, s.PendingBytes = fl.pos, fl.ino, fi.Size()-fl.pos })
	return fl, nil
}

// watchInbox arms the file events of the inbox (fsx.NewFileWaker): each
// one wakes the follower. The inbox file itself is watched, not its
// directory, so the doorman's own writes beside it (the heartbeat's
// replacement every interval, acks, offset, attempt) wake nothing. Without
// file events it is followed by the safety poll alone.
func (fl *follower) watchInbox() {
	w := fsx.NewFileWaker(time.Hour, fl.files.Inbox)
	if w.Polling() {
		w.Close()
		fl.d.logf("file events unavailable: following by the safety poll")
		return
	}
	fl.watcher, fl.wake = w, w.C
	fl.d.inboxWatch.Store(w)
}

// openFollowed opens the inbox to follow, with its file info.
func openFollowed(path string) (*os.File, fs.FileInfo, error) {
	f, err := fsx.OpenRead(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// resumeFacts is what a doorman's start knows about where to resume
// following the inbox.
type resumeFacts struct {
	prevInode uint64 // the inode the last heartbeat named; 0: none
	inode     uint64 // the inbox's
	genKnown  bool   // the attempt record names the inode's generation
	offset    int64  // the offset file's, else the monitor-era acks' (0 when neither)
	verify    bool   // the offset was read from its file: it must end the last acked line
	size      int64  // the inbox's size
	// endsLastAck: the offset ends the generation's last acked line before
	// it (offsetVerified); asked only of a verified offset within the file.
	endsLastAck bool
	// modifiedSince: the inbox was modified after the offset file was
	// last written.
	modifiedSince bool
}

// resumePoint is where a starting doorman resumes: the offset, or 0 with
// the reason (fresh) when the file's contents are not the ones the offset
// and the acks were written for; then it is a new generation, and none of
// its lines is taken for one of the old file's.
func resumePoint(f resumeFacts) (off int64, fresh string) {
	switch {
	case f.prevInode != 0 && f.inode != 0 && f.prevInode != f.inode && !f.genKnown:
		return 0, "inbox replaced while no doorman ran"
	case f.offset > f.size:
		return 0, fmt.Sprintf("offset %d beyond the file (%d bytes): truncated while no doorman ran", f.offset, f.size)
	case f.verify && f.offset > 0 && !f.endsLastAck:
		// The inbox was recreated (ext4 reuses the inode number at once)
		// or rewritten while no doorman ran: the offset is not where the
		// last acked line ends.
		return 0, fmt.Sprintf("offset %d does not end the last acked line: the inbox was rewritten while no doorman ran", f.offset)
	case f.verify && f.offset > 0 && f.offset == f.size && f.modifiedSince:
		// Emptied and refilled up to the same size (the same lines sent
		// again): an append would have grown it.
		return 0, fmt.Sprintf("inbox modified since the offset was written but not grown past it (%d bytes): rewritten while no doorman ran", f.offset)
	}
	return f.offset, ""
}

// resume finds where the follower resumes in its open file (fi): it
// gathers the facts (the offset read, with offErr; the monitor-era acks;
// the generation; one bounded pass over the acks), takes resumePoint's
// answer and, for a new generation, records it. It sets the generation,
// the acks at or after the offset and the pacer's seed, and returns the
// offset.
func (fl *follower) resume(prevIno uint64, off int64, offErr error, fi fs.FileInfo) int64 {
	d, files := fl.d, fl.files
	hasOffset := !errors.Is(offErr, fs.ErrNotExist)
	if offErr != nil && hasOffset {
		d.logf("%v: finding the resume point from the acks", offErr)
		off = 0
	}
	if !hasOffset {
		if n, adopted := adoptMonitorEra(files, fl.f); adopted > 0 {
			off = n
			d.logf("adopted %d monitor-era lines as read (offset %d)", adopted, n)
		}
	}
	// The file's generation: the one the attempt record names for this
	// inode, else that of the inode's last ack. One bounded pass over the
	// ack file keeps what a verified offset needs: the last ack before it,
	// the acks at or after it (of the generation), and the deliveries the
	// receiver still remembers (for the pacer).
	gen, genKnown := inbox.GenerationOf(files.Attempt, fl.ino)
	st := scanStartAcks(files.Ack, fl.ino, gen, genKnown, off, fl.pacer, d.o.Host.now())
	fl.pacer.seed(st.recent, d.o.Host.now())
	fl.gen, fl.acked = st.gen, st.after
	facts := resumeFacts{prevInode: prevIno, inode: fl.ino, genKnown: genKnown, offset: off, verify: offErr == nil, size: fi.Size()}
	if facts.verify && off > 0 && off <= fi.Size() {
		facts.endsLastAck = offsetVerified(fl.f, off, st.last, st.hasLast, fl.gen == "")
		facts.modifiedSince = off == fi.Size() && modifiedAfter(fi, files.Offset)
	}
	off, fresh := resumePoint(facts)
	if fresh != "" {
		d.logf("%s: a new generation, following the file from 0", fresh)
		fl.acked = map[int64]string{}
		if err := fl.newGeneration(); err != nil {
			// Its first door write cannot be recorded either (the line
			// waits, attempt-unwritable); a refusal's ack carries it.
			d.logf("%v", err)
		}
	}
	return off
}

// newGeneration starts a new generation of the file followed: no attempt
// or ack of the earlier contents counts for its lines. It is recorded
// (inbox.GenerationRecord) before the caller moves the offset, so a
// doorman that restarts in between finds the new generation too.
func (fl *follower) newGeneration() error {
	fl.gen = ids.New()
	fl.attempt = nil
	if err := fl.writeAttempt(inbox.GenerationRecord(fl.ino, fl.gen)); err != nil {
		return fmt.Errorf("recording the inbox's new generation: %w", err)
	}
	return nil
}

// modifiedAfter reports whether the file fi was modified after the file at
// path was last written (both times are the file system's).
func modifiedAfter(fi fs.FileInfo, path string) bool {
	pi, err := os.Lstat(path)
	return err == nil && fi.ModTime().After(pi.ModTime())
}

func (fl *follower) close() {
	fl.closeTranscript()
	fl.watcher.Close()
	fl.regWaker.Close()
	for _, p := range fl.exits {
		p.Close()
	}
	fl.wg.Wait()
	if fl.f != nil {
		fl.f.Close()
	}
}

// startAcks is what a doorman's start keeps of the ack file.
type startAcks struct {
	gen     string           // the generation the acks below are of
	last    inboxv1.Ack      // the generation's ack with the greatest line_offset before off
	hasLast bool             // whether there is one
	after   map[int64]string // line_offset → sha256 of the generation's acks at or after off
	recent  []inboxv1.Ack    // deliveries the receiver still remembers
}

// scanStartAcks reads the ack file once, in bounded lines (ScanAcks),
// keeping only what the resume at off needs: memory grows with the acks
// at or after off and the recent deliveries, not with the file. Only the
// acks of inode in generation gen count; when the generation is not known
// (!genKnown), it is that of the inode's last ack.
func scanStartAcks(path string, inode uint64, gen string, genKnown bool, off int64, p *pacer, now time.Time) startAcks {
	st := startAcks{gen: gen, after: map[int64]string{}}
	f, err := fsx.OpenRead(path)
	if err != nil {
		return st
	}
	defer f.Close()
	inbox.ScanAcks(f, 0, func(a inboxv1.Ack, _ int64) bool {
		if _, ok := p.recent(a, now); ok {
			st.recent = append(st.recent, a)
		}
		if a.Inode != inode || a.LineOffset == nil {
			return true
		}
		if a.Gen != st.gen {
			if genKnown {
				return true
			}
			// A later generation of the inode: the earlier one's acks
			// do not count.
			st.gen, st.last, st.hasLast, st.after = a.Gen, inboxv1.Ack{}, false, map[int64]string{}
		}
		switch o := *a.LineOffset; {
		case o >= off:
			st.after[o] = a.SHA256
		case !st.hasLast || o >= *st.last.LineOffset:
			st.last, st.hasLast = a, true
		}
		return true
	})
	return st
}

// offsetVerified reports whether off is where the last acked line before
// it ends: the bytes from that ack's line_offset up to off are one line
// whose sha256 is the ack's. With no ack before off, only the line ending
// is checked (a resume point never cuts a line), and only when lenient (in
// a file's first generation: an offset written by hand or adopted from a
// monitor-era ack file); in a later one, every line before the offset was
// acked in it.
func offsetVerified(f *os.File, off int64, last inboxv1.Ack, hasLast, lenient bool) bool {
	var b [1]byte
	if _, err := f.ReadAt(b[:], off-1); err != nil || b[0] != '\n' {
		return false
	}
	if !hasLast {
		return lenient
	}
	start := *last.LineOffset
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, start, off-1-start)); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == last.SHA256
}

// adoptMonitorEra returns the offset after the inbox lines that a
// monitor-era ack file ("<ts> read: <first 80 characters>") records as read,
// matched line by line from the start. Both files are read in bounded
// lines: an ack or inbox line of any length costs at most a buffer.
func adoptMonitorEra(files inboxv1.Files, in *os.File) (int64, int) {
	af, err := fsx.OpenRead(files.Ack)
	if err != nil {
		return 0, 0
	}
	defer af.Close()
	br := bufio.NewReaderSize(io.NewSectionReader(in, 0, 1<<62), readPiece)
	var off int64
	n := 0
	inbox.ScanMonitorEraAcks(af, func(read string) bool {
		head, size, ok := readLineHead(br)
		if !ok {
			return false
		}
		text := string(head)
		if utf8.RuneCountInString(text) > 80 {
			text = string([]rune(text)[:80])
		}
		if strings.TrimSpace(text) != read {
			return false
		}
		off += size
		n++
		return true
	})
	return off, n
}

// readLineHead reads one complete line of br: up to its first buffer of
// bytes (without the newline) and its whole size; a line longer than the
// buffer is skipped over, not held. ok is false at the end or a torn line.
func readLineHead(br *bufio.Reader) (head []byte, size int64, ok bool) {
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		if head == nil {
			head = bytes.TrimSuffix(bytes.Clone(chunk), []byte("\n"))
		}
		switch {
		case err == nil:
			return head, size, true
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, 0, false
		}
	}
}

// errQueuedBefore: the last look before a write found the row of an
// earlier one; nothing was written.
var errQueuedBefore = errors.New("queued by an earlier write")

// errStop ends a pump without advancing: the context ended.
var errStop = errors.New("stopping")

// run follows the file until ctx ends or the identity changes.
func (fl *follower) run(ctx context.Context) error {
	d := fl.d
	poll := d.pollEvery()
	nextID := d.o.Host.now().Add(identityEvery)
	backoff := time.Duration(0)
	if err := fl.recheckAtStart(ctx); err != nil {
		return err
	}
	for {
		d.wakeups.Add(1)
		err := fl.pump(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var de *DeliveryError
		var ue *untrustedError
		switch {
		case errors.Is(err, errSwitch), errors.As(err, &ue):
			return err
		case errors.As(err, &de):
			if d.o.Once {
				return err
			}
			fl.idDirty.Store(true) // the next write works the identity out again
			backoff = min(max(2*backoff, backoffMin), backoffMax)
			if de.RetryIn > 0 {
				// A line waiting out the receiver's windows: look for a
				// late enqueue row at the same growing intervals, but
				// write no sooner than RetryIn.
				backoff = min(backoff, de.RetryIn)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-d.o.After(backoff):
			}
			continue
		case err != nil:
			d.logf("%v", err)
			d.update(func(s *Status) { s.LastError = err.Error() })
			if d.o.Once {
				return err
			}
		default:
			backoff = 0
			if d.o.Once {
				return nil
			}
		}
		// With identity events an idle doorman wakes for an event or the
		// safety poll only; without them, also every identityEvery.
		wait := poll
		if !fl.idEvents {
			wait = min(poll, max(nextID.Sub(d.o.Host.now()), time.Millisecond))
		}
		var timer <-chan time.Time // nil: the heartbeat's beat is the poll
		if !fl.pollOnBeat {
			timer = d.o.After(wait)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-fl.wake:
		case <-fl.pokes:
		case <-fl.regWake:
			fl.idDirty.Store(true)
		case <-timer:
		}
		if now := d.o.Host.now(); fl.idEvents || !now.Before(nextID) {
			nextID = now.Add(identityEvery)
			if err := fl.recheckIdentity(ctx); err != nil {
				if errors.Is(err, errStop) {
					return nil
				}
				return err
			}
		}
	}
}

// recheckAtStart works the identity out once more as the follow loop
// starts, when its changes are events: it was worked out before the
// watches were armed. Done here rather than at the first wake-up (an idle
// doorman's first beat, or the first line's delivery, which then waited
// for it). errSwitch as recheckIdentity; nil when ctx ended.
func (fl *follower) recheckAtStart(ctx context.Context) error {
	if !fl.idEvents {
		return nil
	}
	if err := fl.recheckIdentity(ctx); !errors.Is(err, errStop) {
		return err
	}
	return nil
}

// changed reports whether an identity no longer allows serving the same
// inbox for the same owner.
func changed(old, cur identity) bool {
	return !cur.ok() || cur.SessionID != old.SessionID || cur.OwnerPID != old.OwnerPID || cur.Socket != old.Socket
}

// pump handles every complete line there is.
func (fl *follower) pump(ctx context.Context) error {
	if err := fl.checkPath(ctx); err != nil {
		return err
	}
	if err := fl.drain(ctx); err != nil {
		return err
	}
	return nil
}

// drain handles the complete lines of the open file.
func (fl *follower) drain(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return nil
		}
		kind, line, sha, off, next, err := fl.next()
		if err != nil {
			return &fs.PathError{Op: "read", Path: fl.files.Inbox, Err: err}
		}
		if kind == noLine {
			// Caught up: an idle doorman keeps no transcript watch.
			fl.dropTranscript()
			fl.setPending()
			if f := fl.d.o.caughtUp; f != nil {
				f()
			}
			return nil
		}
		if err := fl.handle(ctx, kind, line, sha, off); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
		fl.advance(next)
		if err := inbox.WriteOffset(fl.files.Offset, next); err != nil {
			return err
		}
		fl.d.update(func(s *Status) { s.Offset = next })
	}
}

// setPending reports the bytes after the offset: of the size at the last
// look when file events say what came since, else of a fresh one.
func (fl *follower) setPending() {
	size := fl.seen.size
	if fl.wake == nil || !fl.seen.ok {
		fi, err := fl.f.Stat()
		if err != nil {
			return
		}
		size = fi.Size()
	}
	size = max(size, fl.pos+int64(len(fl.win)-fl.wstart))
	p := max(size-fl.pos, 0)
	fl.d.update(func(s *Status) { s.PendingBytes = p })
}

// checkTrust judges the inbox followed (fi, by its descriptor) and its
// directory at each look, not only at the start (serve): an inbox, or its
// directory, made writable by others while it is followed holds lines
// another user could have written. None is delivered: the error is an
// *untrustedError, which the doorman reports as at the start.
func (fl *follower) checkTrust(fi fs.FileInfo) error {
	uid := fl.d.o.Host.Station.UID()
	if err := fsx.CheckTrust(fl.files.Inbox, fi, uid); err != nil {
		return &untrustedError{err}
	}
	if err := fsx.CheckDirTrust(filepath.Dir(fl.files.Inbox), uid); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &untrustedError{err}
	}
	return nil
}

// checkPath notices truncation, a rewrite and replacement: each starts a
// new generation of the file, followed from 0.
func (fl *follower) checkPath(ctx context.Context) error {
	writes, counted := fl.watcher.Writes() // before the look: a write after it is counted after it
	fi, err := fl.f.Stat()
	if err != nil {
		return err
	}
	if err := fl.checkTrust(fi); err != nil {
		return err
	}
	why := ""
	keep := false
	switch {
	case fi.Size() < fl.pos+int64(len(fl.win)-fl.wstart):
		why = fmt.Sprintf("inbox truncated (%d bytes, offset %d)", fi.Size(), fl.pos)
	case fl.seen.ok && fi.Size() == fl.seen.size && !fi.ModTime().Equal(fl.seen.mod):
		if counted && writes == fl.writesAtLook {
			// Nothing written since the last look: touched, or an
			// append that failed. The old look is kept, so a write
			// whose event is not read yet is still a rewrite at the
			// next look.
			keep = true
			break
		}
		// Emptied and refilled to the same size since the last look.
		why = fmt.Sprintf("inbox rewritten (%d bytes, modified without growing)", fi.Size())
	}
	if !keep {
		fl.seen, fl.writesAtLook = lookAt(fi), writes
	}
	if why != "" {
		fl.d.logf("%s: a new generation, from 0", why)
		fl.reset(0)
		fl.acked = map[int64]string{}
		if err := fl.newGeneration(); err != nil {
			return err
		}
		if err := inbox.WriteOffset(fl.files.Offset, 0); err != nil {
			return err
		}
		fl.d.update(func(s *Status) { s.Offset = 0 })
	}
	li, err := os.Lstat(fl.files.Inbox)
	if err == nil && li.Mode().IsRegular() && inodeOf(li) == fl.ino {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Replaced, removed or not a regular file any more: drain the old
	// file first.
	if err := fl.drain(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	writes, _ = fl.watcher.Writes()
	nf, err := fsx.OpenRead(fl.files.Inbox)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed: wait for a sender to create it again
		}
		return err
	}
	nfi, err := nf.Stat()
	if err != nil {
		nf.Close()
		return err
	}
	fl.d.logf("inbox replaced: a new generation, following the new file from 0")
	fl.f.Close()
	fl.f, fl.ino, fl.seen, fl.writesAtLook = nf, inodeOf(nfi), lookAt(nfi), writes
	fl.reset(0)
	fl.acked = map[int64]string{}
	if err := fl.newGeneration(); err != nil {
		return err
	}
	if err := inbox.WriteOffset(fl.files.Offset, 0); err != nil {
		return err
	}
	fl.d.update(func(s *Status) { s.Offset, s.Inode = 0, fl.ino })
	return nil
}

func (fl *follower) reset(pos int64) {
	fl.pos, fl.win, fl.wstart, fl.scan = pos, fl.win[:0], 0, nil
}

// next finds the next complete line at pos.
func (fl *follower) next() (kind lineKind, line []byte, sha string, off, next int64, err error) {
	for {
		if s := fl.scan; s != nil {
			n, rerr := fl.f.ReadAt(fl.piece, s.next)
			if i := bytes.IndexByte(fl.piece[:n], '\n'); i >= 0 {
				s.h.Write(fl.piece[:i])
				return longLine, nil, hex.EncodeToString(s.h.Sum(nil)), s.start, s.next + int64(i) + 1, nil
			}
			s.h.Write(fl.piece[:n])
			s.next += int64(n)
			if n == 0 || errors.Is(rerr, io.EOF) {
				return noLine, nil, "", 0, 0, nil // resumes here on the next wake-up
			}
			if rerr != nil {
				return noLine, nil, "", 0, 0, rerr
			}
			continue
		}
		buf := fl.win[fl.wstart:]
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			return fullLine, buf[:i], "", fl.pos, fl.pos + int64(i) + 1, nil
		}
		if len(buf) >= readChunk {
			h := sha256.New()
			h.Write(buf)
			fl.scan = &longScan{start: fl.pos, next: fl.pos + int64(len(buf)), h: h}
			fl.win, fl.wstart = fl.win[:0], 0
			continue
		}
		if fl.wstart > 0 { // compact
			fl.win = append(fl.win[:0], buf...)
			fl.wstart = 0
		}
		if fl.wake != nil && fl.seen.ok && fl.pos+int64(len(fl.win)) >= fl.seen.size {
			// Read up to the size of the last look: what was appended
			// since is an event of the inbox watch, armed before that
			// look, and the next wake-up reads it.
			return noLine, nil, "", 0, 0, nil
		}
		want := min(readChunk-len(fl.win), readPiece)
		n, rerr := fl.f.ReadAt(fl.piece[:want], fl.pos+int64(len(fl.win)))
		fl.win = append(fl.win, fl.piece[:n]...)
		if n == 0 {
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				return noLine, nil, "", 0, 0, rerr
			}
			return noLine, nil, "", 0, 0, nil
		}
	}
}

// advance moves past the line that ended at next.
func (fl *follower) advance(next int64) {
	if fl.scan != nil {
		fl.scan = nil
		fl.win, fl.wstart = fl.win[:0], 0
	} else {
		fl.wstart += int(next - fl.pos)
	}
	fl.pos = next
}

// handle delivers or refuses one line. errStop means: not handled, stop.
func (fl *follower) handle(ctx context.Context, kind lineKind, line []byte, sha string, off int64) error {
	if kind == fullLine {
		sha = inbox.SHA256(line)
	}
	if fl.acked[off] == sha {
		return nil // acked before a crash kept the offset from moving
	}
	if kind == longLine {
		return fl.refuse(sha, off, inboxv1.ReasonTooLong)
	}
	if bytes.HasSuffix(line, inbox.TornMark) {
		return fl.refuse(sha, off, inboxv1.ReasonTorn) // a cut-off line (inbox.AppendInbox)
	}
	msg, err := inbox.Decode(line)
	if err != nil {
		return fl.refuse(sha, off, refuseReason(err))
	}
	return fl.deliver(ctx, msg, sha, off)
}

// refuseReason is the ack's reason for a line Decode refused: the line
// rules' one table.
func refuseReason(err error) inboxv1.Reason { return inboxv1.Reason(inbox.LineReason(err)) }

func (fl *follower) ack(a inboxv1.Ack) error {
	return inbox.AppendAck(fl.files.Ack, a)
}

func (fl *follower) refuse(sha string, off int64, reason inboxv1.Reason) error {
	d := fl.d
	o := off
	a := inboxv1.Ack{
		TS: jsonrow.FormatTime(d.o.Host.now()), SHA256: sha, SessionID: fl.id.SessionID,
		Class: inboxv1.AckRefused, Reason: string(reason),
		LineOffset: &o, Inode: fl.ino, Gen: fl.gen, DoormanPID: d.o.Host.PID, V: inboxv1.Version,
	}
	if err := fl.ack(a); err != nil {
		return err
	}
	d.update(func(s *Status) { s.Refused++ })
	d.logf("refused the line at offset %d: %s", off, reason)
	return nil
}
