package observatory

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/internal/fsx"
)

// MaxLastLine is the most characters of an inbox's last_line.
const MaxLastLine = 200

// maxOffsetFile bounds the read of an <inbox>.offset file.
const maxOffsetFile = 64

// InboxState reads the inbox of session sid in dir: its lines, acks,
// pending lines, last line and the doorman's heartbeat, judged at now
// (pidAlive may be nil to skip the doorman's pid check).
//
// Pending is the number of non-empty lines that start at or beyond the
// doorman's offset when one is known (<inbox>.offset, else the heartbeat's
// offset when the heartbeat names this inbox's inode or no inode), else
// lines − acks (never below 0). An offset beyond the file's end (the inbox
// was replaced) is not used. A missing inbox is Exists false with nothing
// pending; an inbox that cannot be read is an error.
func InboxState(dir, sid string, now time.Time, pidAlive func(int) bool) (Inbox, error) {
	files := claudeinbox.FilesFor(dir, sid)
	in := Inbox{Path: files.Inbox, PendingSource: PendingNoInbox}
	var hb *claudeinbox.Heartbeat
	in.Doorman, hb = readDoorman(files.Heartbeat, sid, now, pidAlive)

	f, err := fsx.OpenRead(files.Inbox)
	if errors.Is(err, fs.ErrNotExist) {
		return in, nil
	}
	if err != nil {
		return in, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return in, &fs.PathError{Op: "stat", Path: files.Inbox, Err: err}
	}
	in.Exists = true
	size := fi.Size()

	offset, known := readOffset(files.Offset)
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
		in.LastLine = NullString(readLine(f, st.lastStart, st.lastEnd))
	}
	if known {
		in.Offset = &offset
		pb := size - offset
		in.PendingBytes = &pb
		in.Pending = st.after
		in.PendingSource = PendingFromOffset
	} else {
		in.PendingSource = PendingFromAcks
	}
	// The reference counts acks in every case; the count is cheap.
	if af, err := fsx.OpenRead(files.Ack); err == nil {
		if afi, err := af.Stat(); err == nil {
			if ast, err := countLines(af, afi.Size(), math.MaxInt64); err == nil {
				in.Acks = ast.lines
			}
		}
		af.Close()
	}
	if !known {
		in.Pending = max(in.Lines-in.Acks, 0)
	}
	return in, nil
}

// readOffset reads <inbox>.offset: a decimal byte offset (a trailing newline
// allowed, as `echo 0 >` writes it).
func readOffset(path string) (int64, bool) {
	f, err := fsx.OpenRead(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	buf := make([]byte, maxOffsetFile)
	n, _ := io.ReadFull(f, buf)
	v, err := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

// readDoorman reads and judges the heartbeat at path; nil when there is no
// heartbeat file. The heartbeat itself is returned when it parsed.
func readDoorman(path, sid string, now time.Time, pidAlive func(int) bool) (*Doorman, *claudeinbox.Heartbeat) {
	hb, fr := claudeinbox.HeartbeatFreshness(path, now, sid, pidAlive)
	switch fr.Reason {
	case claudeinbox.NotFreshMissing:
		return nil, nil
	case claudeinbox.NotFreshUnreadable:
		return &Doorman{NotFreshBecause: NullString(fr.Reason)}, nil
	}
	d := &Doorman{
		PID:       hb.PID,
		Fresh:     fr.Fresh,
		Delivered: hb.Delivered,
		State:     NullString(hb.State),
		Since:     NullString(hb.Since),
		LastSeen:  NullString(hb.LastSeen),
		Mode:      NullString(hb.Mode),
		Version:   NullString(hb.Version),
	}
	if !fr.Fresh {
		d.NotFreshBecause = NullString(fr.Reason)
	}
	if seen, err := claudeinbox.ParseTime(hb.LastSeen); err == nil {
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
	lines              int64 // non-empty complete lines
	after              int64 // of them, those starting at or beyond the pass's from
	lastStart, lastEnd int64 // the last non-empty complete line; lastStart -1 when none
}

// countLines counts the non-empty complete ("\n"-terminated) lines of the
// first size bytes of r in one sequential pass of 64 KiB reads. A line is
// empty when it holds only spaces, tabs or "\r". A last line without its
// newline (being appended) is not counted.
func countLines(r io.ReaderAt, size, from int64) (lineStats, error) {
	st := lineStats{lastStart: -1}
	buf := make([]byte, 64<<10)
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

// readLine returns the line [start, end) of r, at most MaxLastLine
// characters, as valid UTF-8 ("…" ends a cut line).
func readLine(r io.ReaderAt, start, end int64) string {
	n := min(end-start, int64(MaxLastLine*utf8.UTFMax))
	buf := make([]byte, n)
	got, _ := r.ReadAt(buf, start)
	s := strings.ToValidUTF8(strings.TrimRight(string(buf[:got]), "\r"), "\uFFFD")
	cut := end-start > n
	if runes := []rune(s); cut || len(runes) > MaxLastLine {
		s = string(runes[:min(len(runes), MaxLastLine-1)]) + "…"
	}
	return s
}
