package inbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
)

// The inbox's side files are read and written here only: the doorman, the
// sender, the observatory and the fakes all go through these functions, so
// a file has one reader and one writer.

// ErrBadOffset: an <inbox>.offset file that does not hold a non-negative
// decimal byte offset (an empty file included). The offset is unknown.
var ErrBadOffset = errors.New("inbox: bad offset file")

// maxOffsetFile bounds the read of an <inbox>.offset file.
const maxOffsetFile = 64

// maxAckLine bounds one line of an ack file: a longer line is skipped
// without being held in memory (no ack is that long).
const maxAckLine = 64 << 10

// ReadOffset reads <inbox>.offset: a decimal byte offset, a trailing
// newline allowed (as `echo 0 >` writes it). A missing file is
// fs.ErrNotExist; anything else that is not such an offset, an empty file
// included, is ErrBadOffset. At most 64 bytes are read; a symlink is
// refused.
func ReadOffset(path string) (int64, error) {
	return readOffset(nil, path)
}

// readOffset is ReadOffset through the listing l (nil: the path checked
// itself).
func readOffset(l *Listing, path string) (int64, error) {
	var arr [maxOffsetFile + 1]byte
	b, err := l.appendFile(arr[:0], path, maxOffsetFile)
	if errors.Is(err, fsx.ErrTooLarge) {
		return 0, &fs.PathError{Op: "parse", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrBadOffset, maxOffsetFile)}
	}
	if err != nil {
		return 0, err
	}
	s := bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	v, perr := strconv.ParseInt(string(s), 10, 64)
	if perr != nil || v < 0 {
		return 0, &fs.PathError{Op: "parse", Path: path, Err: fmt.Errorf("%w: %q", ErrBadOffset, s)}
	}
	return v, nil
}

// WriteOffset replaces <inbox>.offset with off (atomically, 0600).
func WriteOffset(path string, off int64) error {
	return fsx.WriteFileAtomic(path, []byte(strconv.FormatInt(off, 10)+"\n"))
}

// AppendAck appends a as one line to the ack file at path (one write with
// O_APPEND, 0600, a symlink refused).
func AppendAck(path string, a inboxv1.Ack) error {
	b, err := EncodeAck(a)
	if err != nil {
		return err
	}
	_, err = fsx.AppendLine(path, b)
	return err
}

// ReadAcks returns the JSON acks of the ack file at path from byte from on,
// in order (see ScanAcks), and the offset after the last complete line. A
// missing file is no acks.
func ReadAcks(path string, from int64) ([]inboxv1.Ack, int64, error) {
	f, err := fsx.OpenRead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, from, nil
	}
	if err != nil {
		return nil, from, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() < from {
		from = 0 // truncated or replaced: read it again from the start
	}
	var out []inboxv1.Ack
	end := from
	err = ScanAcks(io.NewSectionReader(f, from, 1<<62), from, func(a inboxv1.Ack, e int64) bool {
		out = append(out, a)
		end = e
		return true
	})
	return out, end, err
}

// WriteHeartbeat replaces the heartbeat file at path with h (atomically,
// 0600). It is advisory state, rewritten every few seconds: not fsynced
// (a crash leaves the last one, or none, and no live doorman either way).
func WriteHeartbeat(path string, h inboxv1.Heartbeat) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return fsx.WriteAdvisoryAtomic(path, append(b, '\n'))
}

// scanLines calls fn with each complete line of r (without "\n") and the
// offset after it; a line longer than max is skipped without being held.
func scanLines(r io.Reader, start int64, limit int, fn func(line []byte, end int64) bool) error {
	size := limit
	if sr, ok := r.(*io.SectionReader); ok && sr.Size() < int64(limit) {
		// All of it fits: a buffer of its size (a send's look at the
		// ack file reads one ack line, not a 64 KiB buffer's worth), and
		// no line can be too long.
		size = int(sr.Size()) + 1
	}
	br := bufio.NewReaderSize(r, size)
	pos := start
	skipping := false
	for {
		line, err := br.ReadSlice('\n')
		pos += int64(len(line))
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			skipping = true
			continue
		case err == nil && skipping:
			skipping = false
			continue
		case err == nil:
			if !fn(line[:len(line)-1], pos) {
				return nil
			}
			continue
		case errors.Is(err, io.EOF):
			return nil
		default:
			return &fs.PathError{Op: "read", Path: "ack", Err: err}
		}
	}
}

// Attempt is <inbox>.doorman.attempt: the door write of one line, recorded
// by the doorman before it writes, so that it (or the next doorman, after a
// crash) looks for the receiver's enqueue row of that write before writing
// the line again.
//
// It also records the generation of the inbox file the doorman follows
// (Gen): a doorman that finds the inbox truncated, rewritten or replaced
// starts a new generation and records it here, with no write
// (LineOffset -1, see [GenerationRecord]), before it moves its offset, so
// that no ack, attempt or offset of the file's earlier contents counts for
// the new ones, also after a restart.
type Attempt struct {
	LineOffset int64  `json:"line_offset"`
	SHA256     string `json:"sha256"`
	Inode      uint64 `json:"inode,omitempty"`
	// Gen is the generation of the inbox file (Ack.Gen); empty for the
	// first generation of a file the doorman never saw rewritten (and in
	// older files).
	Gen   string `json:"gen,omitempty"`
	MsgID string `json:"msg_id"`
	// Transcript and TranscriptOffset are where the session's transcript
	// ended before the write: the enqueue row is looked for after it.
	Transcript       string `json:"transcript"`
	TranscriptOffset int64  `json:"transcript_offset"`
	// At is when the write began (FormatTime); an enqueue row older than
	// it is not this write's.
	At string `json:"at"`
	// Writes counts the door writes of the line that returned and whose
	// enqueue row did not come: the writes that count toward the limit.
	// A record without Unconfirmed does not count its own write (recorded
	// before the frames go out, it may never have been made); older
	// doormen counted it, which can cost such a line one retry.
	Writes int `json:"writes"`
	// Unconfirmed is set once the write returned and the confirmation
	// bound passed without the enqueue row. A record without it is a write
	// whose fate is unknown (the doorman died before the write or in its
	// wait, or the write failed part way): the next write waits out the
	// same bound and windows all the same, but it is not counted.
	Unconfirmed bool `json:"unconfirmed,omitempty"`
	// FirstAt, FirstTranscript and FirstTranscriptOffset are At,
	// Transcript and TranscriptOffset of the line's first write (extension
	// keys: a file without them is a first write, its own first). A late
	// enqueue row of any write is looked for from there.
	FirstAt               string `json:"first_at,omitempty"`
	FirstTranscript       string `json:"first_transcript,omitempty"`
	FirstTranscriptOffset int64  `json:"first_transcript_offset,omitempty"`
}

// First returns when and where in the transcript the line's first write
// began: the First* fields, or, in a record without them, the write's own.
func (a Attempt) First() (at, transcript string, offset int64) {
	if a.FirstAt == "" {
		return a.At, a.Transcript, a.TranscriptOffset
	}
	return a.FirstAt, a.FirstTranscript, a.FirstTranscriptOffset
}

// Matches reports whether the attempt is for the line (sha, offset) of the
// inbox file with this inode, in its generation gen.
func (a Attempt) Matches(sha string, offset int64, inode uint64, gen string) bool {
	return a.SHA256 == sha && a.LineOffset == offset && a.Gen == gen && (a.Inode == 0 || inode == 0 || a.Inode == inode)
}

// GenerationRecord is the attempt record of a generation in which no line
// was written yet: it matches no line.
func GenerationRecord(inode uint64, gen string) Attempt {
	return Attempt{LineOffset: -1, Inode: inode, Gen: gen}
}

// GenerationOf returns the generation the attempt record at path names
// for the inbox file with this inode; ok is false when the record is
// missing, unreadable, of another file, or of a doorman that recorded no
// generation.
func GenerationOf(path string, inode uint64) (gen string, ok bool) {
	a, err := ReadAttempt(path)
	if err != nil || a.Gen == "" || inode == 0 || a.Inode != inode {
		return "", false
	}
	return a.Gen, true
}

// maxAttemptFile bounds the read of an attempt file.
const maxAttemptFile = 64 << 10

// ReadAttempt reads an attempt file; a missing one is fs.ErrNotExist.
func ReadAttempt(path string) (Attempt, error) {
	f, err := fsx.OpenRead(path)
	if err != nil {
		return Attempt{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAttemptFile))
	if err != nil {
		return Attempt{}, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	var a Attempt
	if err := json.Unmarshal(b, &a); err != nil {
		return Attempt{}, &fs.PathError{Op: "parse", Path: path, Err: err}
	}
	return a, nil
}

// WriteAttempt replaces the attempt file at path with a (atomically, 0600),
// without fsync: it is written before every door write, and what it must
// outlive is its doorman (killed, even with kill -9), which the page cache
// does. A machine that crashed took the receiver's queue with it, and the
// acks (appended without fsync) promise nothing more across a crash.
func WriteAttempt(path string, a Attempt) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return fsx.WriteAdvisoryAtomic(path, append(b, '\n'))
}
