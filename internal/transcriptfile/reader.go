package transcriptfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultChunkSize is how many bytes a Reader reads at a time.
const DefaultChunkSize = 64 << 10

// TailBytes is the most of a transcript's head or tail that is looked up in
// for one fact (a rider's last step and text, a recorded cwd): 4 MiB.
const TailBytes = 4 << 20

// Reader yields the lines of a file from the last to the first, reading
// the file backwards in chunks through ReadAt. It takes no lock and reads
// only as far back as it is asked to.
//
// A Reader looks at the first size bytes of the file only (the size when it
// was opened: rows appended later are not seen). When the region does not
// end with "\n", its last line is being written: it is left out and its
// length reported by TornBytes. A trailing "\r" is removed from each line
// and empty lines are skipped. With a byte bound (maxBytes > 0) the Reader
// never reads before size-maxBytes; the line cut by the bound is left out and
// Bounded reports true. With a line bound (SetMaxLine) a longer line is
// passed over, counted by LongLines. The torn last line is never held: a
// torn tail of any length costs one chunk of memory.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	r      io.ReaderAt
	size   int64
	min    int64 // lowest offset of a line the reader may return
	floor  int64 // lowest offset it reads: min-1, to see whether a line starts at min
	chunk  int
	pos    int64  // unconsumed data is [min, pos); pos is after a '\n' or at size
	buf    []byte // file[bufOff : bufOff+len(buf)], covering [bufOff, pos)
	bufOff int64
	read   int64
	torn   int64
	init   bool
	bound  bool
	err    error

	maxLine int64 // a longer line is passed over unheld; 0: no bound
	long    int   // lines passed over for maxLine
}

// NewReader returns a Reader over the first size bytes of r. maxBytes > 0
// bounds how far back it reads (see Reader); 0 or less means unbounded.
func NewReader(r io.ReaderAt, size, maxBytes int64) *Reader {
	if size < 0 {
		size = 0
	}
	min := int64(0)
	if maxBytes > 0 && size > maxBytes {
		min = size - maxBytes
	}
	floor := min
	if min > 0 {
		floor = min - 1
	}
	return &Reader{r: r, size: size, min: min, floor: floor, chunk: DefaultChunkSize, pos: size, bufOff: size}
}

// SetChunkSize changes how many bytes are read at a time (at least 1).
// Call it before the first Prev.
func (r *Reader) SetChunkSize(n int) {
	if n < 1 {
		n = 1
	}
	r.chunk = n
}

// SetMaxLine bounds the bytes held for one line (its "\n" not counted, a
// "\r" before it counted): a longer line is not returned but passed over,
// read a chunk at a time without being held whole, and counted by
// LongLines. 0 or less means no bound. Call it before the first Prev.
func (r *Reader) SetMaxLine(n int64) {
	r.maxLine = max(n, 0)
}

// Prev returns the line before the previous one returned (the last line
// first) without its "\n" or "\r\n", and the byte offset where it starts.
// The line aliases the Reader's buffer: it is valid until the next call.
// At the start of the file (or of the bound) Prev returns io.EOF.
func (r *Reader) Prev() (line []byte, offset int64, err error) {
	if r.err != nil {
		return nil, 0, r.err
	}
	if !r.init {
		r.init = true
		if err := r.dropTorn(); err != nil {
			r.err = err
			return nil, 0, err
		}
	}
	for {
		if r.pos <= r.min {
			r.err = io.EOF
			return nil, 0, io.EOF
		}
		// The line ends at pos-1, which holds its '\n'.
		end := r.pos - 1
		start, found, long, err := r.findLineStart(end)
		if err != nil {
			r.err = err
			return nil, 0, err
		}
		if !found && r.min > 0 {
			// The bound cut this line: its start is not ours to read.
			r.bound = true
			r.pos = r.min
			r.err = io.EOF
			return nil, 0, io.EOF
		}
		if long {
			r.long++
			r.pos = start
			continue
		}
		line = r.buf[start-r.bufOff : end-r.bufOff]
		r.pos = start
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		return line, start, nil
	}
}

// dropTorn positions pos after the last '\n' of the region.
func (r *Reader) dropTorn() error {
	if r.pos <= r.min {
		return nil
	}
	last := r.pos - 1
	if err := r.fill(last); err != nil {
		return err
	}
	if r.buf[last-r.bufOff] == '\n' {
		return nil
	}
	// The torn line is never returned: look for its start without holding
	// it (a sparse tail of a gigabyte is no gigabyte of memory).
	start, found := r.min, false
	if i := bytes.LastIndexByte(r.buf[:r.pos-r.bufOff], '\n'); i >= 0 {
		start, found = r.bufOff+int64(i)+1, true
	} else if r.bufOff > r.floor {
		var err error
		if start, found, err = r.skipBack(r.bufOff); err != nil {
			return err
		}
	}
	if !found && r.min > 0 {
		r.bound = true
	}
	r.torn = r.pos - start
	r.pos = start
	return nil
}

// findLineStart returns the offset after the last '\n' before end, reading
// backwards as needed; found is false when no '\n' lies in [min, end) and
// start is then min. long reports a line longer than maxLine: once the
// bytes held pass it, the rest is looked through by skipBack, unheld.
func (r *Reader) findLineStart(end int64) (start int64, found, long bool, err error) {
	searchEnd := end
	for {
		if searchEnd > r.bufOff {
			if i := bytes.LastIndexByte(r.buf[:searchEnd-r.bufOff], '\n'); i >= 0 {
				start = r.bufOff + int64(i) + 1
				return start, true, r.tooLong(end - start), nil
			}
		}
		searchEnd = r.bufOff
		if r.bufOff <= r.floor {
			return r.min, false, r.tooLong(end - r.min), nil
		}
		if r.tooLong(end - r.bufOff) {
			start, found, err = r.skipBack(r.bufOff)
			return start, found, true, err
		}
		if err := r.fill(r.bufOff - 1); err != nil {
			return 0, false, false, err
		}
	}
}

// tooLong reports whether a line of n bytes is past the line bound.
func (r *Reader) tooLong(n int64) bool { return r.maxLine > 0 && n > r.maxLine }

// skipBack is findLineStart for bytes not to be held: it drops the buffer
// and reads [floor, from) backwards one chunk at a time into a buffer of
// its own, keeping only the chunk where the '\n' is found (the bytes
// before it are the next line's).
func (r *Reader) skipBack(from int64) (start int64, found bool, err error) {
	r.buf = nil
	chunk := make([]byte, r.chunk)
	for off := from; off > r.floor; {
		lo := max(off-int64(len(chunk)), r.floor)
		b := chunk[:off-lo]
		if err := r.readAt(b, lo); err != nil {
			return 0, false, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			r.buf, r.bufOff = b[:i+1], lo
			return lo + int64(i) + 1, true, nil
		}
		off = lo
	}
	r.bufOff = r.min // the buffer covers [min, min): nothing is left to read
	return r.min, false, nil
}

// readAt fills b from offset off, counting what it read; a short read is
// the file having shrunk under the Reader.
func (r *Reader) readAt(b []byte, off int64) error {
	got, err := r.r.ReadAt(b, off)
	r.read += int64(got)
	if got < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the file shrank under us
		}
		return fmt.Errorf("read at %d: %w", off, err)
	}
	return nil
}

// fill makes the buffer cover offset off (off >= floor), keeping the
// unconsumed bytes [bufOff, pos). It reads at least one chunk, and at least
// as many bytes as it keeps, so a long line costs O(its length) overall.
func (r *Reader) fill(off int64) error {
	if off >= r.bufOff {
		return nil
	}
	keep := r.pos - r.bufOff
	if keep < 0 {
		keep = 0
	}
	n := int64(r.chunk)
	if n < keep {
		n = keep
	}
	if need := r.bufOff - off; n < need {
		n = need
	}
	newOff := r.bufOff - n
	if newOff < r.floor {
		newOff = r.floor
	}
	nb := make([]byte, (r.bufOff-newOff)+keep)
	if err := r.readAt(nb[:r.bufOff-newOff], newOff); err != nil {
		return err
	}
	copy(nb[r.bufOff-newOff:], r.buf[:keep])
	r.buf = nb
	r.bufOff = newOff
	return nil
}

// TornBytes is the length of the unterminated last line that was left out
// (0 when the region ends with "\n"). It is known after the first Prev.
func (r *Reader) TornBytes() int64 { return r.torn }

// LongLines is how many lines longer than the line bound were passed over.
func (r *Reader) LongLines() int { return r.long }

// Bounded reports whether the byte bound stopped the Reader before the
// start of the file.
func (r *Reader) Bounded() bool { return r.bound }

// BytesRead is how many bytes the Reader has read so far.
func (r *Reader) BytesRead() int64 { return r.read }
