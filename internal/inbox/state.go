package inbox

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/jsonrow"
)

// maxLastLine is the most characters of an inbox's last_line.
const maxLastLine = 200

// ReadState reads the inbox of session sid in dir: its lines, acks,
// pending lines, last line and the doorman's heartbeat, judged at now
// (pidAlive may be nil to skip the doorman's pid check).
//
// Pending is the number of non-empty lines that start at or beyond the
// doorman's offset when one is known (<inbox>.offset, else the heartbeat's
// offset when the heartbeat names this inbox's inode or no inode), else
// lines − acks (never below 0). An offset beyond the file's end (the inbox
// was replaced) is not used. A missing inbox is Exists false with nothing
// pending; an inbox that cannot be read is an error.
func ReadState(dir, sid string, now time.Time, pidAlive func(int) bool) (inboxv1.Inbox, error) {
	return readState(nil, dir, sid, now, pidAlive)
}

// ReadState is [ReadState] of session sid's inbox in the listed
// directory, its files opened from the listing.
func (l *Listing) ReadState(sid string, now time.Time, pidAlive func(int) bool) (inboxv1.Inbox, error) {
	if l == nil {
		return inboxv1.Inbox{}, errors.New("inbox: no listing")
	}
	return readState(l, l.dir, sid, now, pidAlive)
}

// readState is ReadState through the listing l (nil: each path checked
// itself).
func readState(l *Listing, dir, sid string, now time.Time, pidAlive func(int) bool) (inboxv1.Inbox, error) {
	files := inboxv1.FilesFor(dir, sid)
	in := inboxv1.Inbox{Path: files.Inbox, PendingSource: inboxv1.PendingNoInbox}
	var hb *inboxv1.Heartbeat
	in.Doorman, hb = readDoorman(l, files.Heartbeat, sid, now, pidAlive)

	f, fi, err := l.openAt(files.Inbox)
	if errors.Is(err, fs.ErrNotExist) {
		return in, nil
	}
	if err != nil {
		return in, err
	}
	defer f.Close()
	in.Exists = true
	size := fi.Size()

	offset, oerr := readOffset(l, files.Offset)
	known := oerr == nil
	if !known && hb != nil {
		if hb.Inode == 0 || hb.Inode == inodeOf(fi) {
			offset, known = hb.Offset, true
		}
	}
	if known && (offset < 0 || offset > size) {
		known = false
	}
	from := int64(math.MaxInt64)
	if known {
		from = offset
	}
	st, err := countLines(f, size, from)
	if err != nil {
		return in, &fs.PathError{Op: "read", Path: files.Inbox, Err: err}
	}
	in.Lines = st.lines
	if st.lastStart >= 0 {
		in.LastLine = inboxv1.NullString(readLine(f, st.whole, st.lastStart, st.lastEnd))
	}
	if known {
		in.Offset = &offset
		pb := size - offset
		in.PendingBytes = &pb
		in.Pending = st.after
		in.PendingSource = inboxv1.PendingFromOffset
	} else {
		in.PendingSource = inboxv1.PendingFromAcks
	}
	// The reference counts acks in every case; the count is cheap.
	if af, afi, err := l.openAt(files.Ack); err == nil {
		if ast, err := countLines(af, afi.Size(), math.MaxInt64); err == nil {
			in.Acks = ast.lines
		}
		af.Close()
	}
	if !known {
		in.Pending = max(in.Lines-in.Acks, 0)
	}
	return in, nil
}

// readDoorman reads and judges the heartbeat at path; nil when there is no
// heartbeat file. The heartbeat itself is returned when it parsed.
func readDoorman(l *Listing, path, sid string, now time.Time, pidAlive func(int) bool) (*inboxv1.Doorman, *inboxv1.Heartbeat) {
	hb, fr := heartbeatFreshness(l, path, now, sid, pidAlive)
	switch fr.Reason {
	case inboxv1.ReasonHeartbeatMissing:
		return nil, nil
	case inboxv1.ReasonHeartbeatUnreadable:
		return &inboxv1.Doorman{NotFreshBecause: inboxv1.NullString(fr.Reason)}, nil
	}
	d := &inboxv1.Doorman{
		PID:       hb.PID,
		Fresh:     fr.Fresh,
		Delivered: hb.Delivered,
		State:     inboxv1.NullString(hb.State),
		Since:     inboxv1.NullString(hb.Since),
		LastSeen:  inboxv1.NullString(hb.LastSeen),
		Mode:      inboxv1.NullString(hb.Mode),
		Version:   inboxv1.NullString(hb.Version),
	}
	if !fr.Fresh {
		d.NotFreshBecause = inboxv1.NullString(fr.Reason)
	}
	if seen, err := jsonrow.ParseTime(hb.LastSeen); err == nil {
		s := math.Round(now.Sub(seen).Seconds()*10) / 10
		d.LastSeenS = &s
	}
	if pidAlive != nil {
		d.PIDAlive = pidAlive(hb.PID)
	}
	return d, &hb
}

// lineStats is what one pass over a file of lines found.
type lineStats struct {
	lines              int64  // non-empty complete lines
	after              int64  // of them, those starting at or beyond the pass's from
	lastStart, lastEnd int64  // the last non-empty complete line; lastStart -1 when none
	whole              []byte // the size bytes read, when one read held them all; else nil
}

// countLines counts the non-empty complete ("\n"-terminated) lines of the
// first size bytes of r in one sequential pass of 64 KiB reads. A line is
// empty when it holds only spaces, tabs or "\r". A last line without its
// newline (being appended) is not counted.
func countLines(r io.ReaderAt, size, from int64) (lineStats, error) {
	st := lineStats{lastStart: -1}
	// Sized to the file, not to the largest read: a station reads
	// hundreds of small inboxes.
	buf := make([]byte, max(1, min(size, 64<<10)))
	lineStart, content := int64(0), false
	for off := int64(0); off < size; {
		want := min(int64(len(buf)), size-off)
		n, err := r.ReadAt(buf[:want], off)
		chunk := buf[:n]
		for pos := 0; pos < len(chunk); {
			i := bytes.IndexByte(chunk[pos:], '\n')
			if i < 0 {
				content = content || hasContent(chunk[pos:])
				break
			}
			content = content || hasContent(chunk[pos:pos+i])
			end := off + int64(pos+i)
			if content {
				st.lines++
				if lineStart >= from {
					st.after++
				}
				st.lastStart, st.lastEnd = lineStart, end
			}
			pos += i + 1
			lineStart, content = off+int64(pos), false
		}
		off += int64(n)
		if int64(n) < want {
			if err == nil || errors.Is(err, io.EOF) {
				break // the file shrank under us: count what is there
			}
			return st, err
		}
		if off == size && int64(n) == size {
			st.whole = chunk
		}
	}
	return st, nil
}

func hasContent(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return true
		}
	}
	return false
}

// readLine returns the line [start, end) of r, at most maxLastLine
// characters, as valid UTF-8 ("…" ends a cut line); from whole, the file's
// bytes from offset 0, when it holds them (no read then).
func readLine(r io.ReaderAt, whole []byte, start, end int64) string {
	n := min(end-start, int64(maxLastLine*utf8.UTFMax))
	var b []byte
	if end <= int64(len(whole)) {
		b = whole[start : start+n]
	} else {
		buf := make([]byte, n)
		got, _ := r.ReadAt(buf, start)
		b = buf[:got]
	}
	s := strings.ToValidUTF8(strings.TrimRight(string(b), "\r"), "\uFFFD")
	cut := end-start > n
	if runes := []rune(s); cut || len(runes) > maxLastLine {
		s = string(runes[:min(len(runes), maxLastLine-1)]) + "…"
	}
	return s
}

// Entry is one inbox found by [ScanState].
type Entry struct {
	Session string
	Inbox   inboxv1.Inbox
}

// ScanState reads every inbox in dir (<sid>.inbox, regular files only)
// whose sid want accepts, by sid. want is required: the callers accept
// the session ids (station.IsSessionID) they do not already report; a nil
// want reads nothing. An inbox that cannot be read is left out and its
// error joined into the returned error; a missing dir has no inboxes.
func ScanState(dir string, want func(sid string) bool, now time.Time, pidAlive func(int) bool) ([]Entry, error) {
	l, err := List(dir)
	if err != nil {
		return nil, err
	}
	return l.Scan(want, now, pidAlive)
}

// Scan is [ScanState] of the listed directory, each inbox read from the
// listing ([Listing.ReadState]).
func (l *Listing) Scan(want func(sid string) bool, now time.Time, pidAlive func(int) bool) ([]Entry, error) {
	if l == nil {
		return nil, nil
	}
	var out []Entry
	var errs []error
	for _, e := range l.sorted {
		sid, ok := strings.CutSuffix(e.Name(), ".inbox")
		if !ok || !e.Type().IsRegular() || want == nil || !want(sid) {
			continue
		}
		in, err := l.ReadState(sid, now, pidAlive)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Entry{Session: sid, Inbox: in})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out, errors.Join(errs...)
}
