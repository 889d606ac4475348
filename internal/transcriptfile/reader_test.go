package transcriptfile

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type lineAt struct {
	Line string
	Off  int64
}

// model is the Reader's contract written forwards: the complete lines of
// data[min:] that start at or after min (and at min only when a line starts
// there), last first, without "\r\n"/"\n", empty ones left out, and those
// longer than maxLine > 0 (without their "\n") left out and counted.
func model(data string, maxBytes, maxLine int64) (lines []lineAt, torn int64, long int) {
	size := int64(len(data))
	min := int64(0)
	if maxBytes > 0 && size > maxBytes {
		min = size - maxBytes
	}
	start := int64(0)
	for i := int64(0); i < size; i++ {
		if data[i] != '\n' {
			continue
		}
		if start >= min && (start == 0 || data[start-1] == '\n') {
			l := strings.TrimSuffix(data[start:i], "\r")
			if maxLine > 0 && i-start > maxLine {
				long++
			} else if l != "" {
				lines = append(lines, lineAt{l, start})
			}
		}
		start = i + 1
	}
	if start < size {
		torn = size - max(start, min)
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return lines, torn, long
}

func readAll(t testing.TB, data string, maxBytes, maxLine int64, chunk int) ([]lineAt, *Reader) {
	t.Helper()
	r := NewReader(strings.NewReader(data), int64(len(data)), maxBytes)
	r.SetChunkSize(chunk)
	r.SetMaxLine(maxLine)
	var got []lineAt
	for {
		line, off, err := r.Prev()
		if errors.Is(err, io.EOF) {
			return got, r
		}
		if err != nil {
			t.Fatalf("Prev: %v", err)
		}
		if int64(len(data)) < off+int64(len(line)) || data[off:off+int64(len(line))] != string(line) {
			t.Fatalf("line %q does not sit at offset %d", line, off)
		}
		got = append(got, lineAt{string(line), off})
	}
}

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name     string
		data     string
		maxBytes int64
		want     []lineAt
		torn     int64
		bounded  bool
	}{
		{name: "empty", data: ""},
		{name: "one line", data: "a\n", want: []lineAt{{"a", 0}}},
		{name: "three lines", data: "a\nbb\nccc\n", want: []lineAt{{"ccc", 5}, {"bb", 2}, {"a", 0}}},
		{name: "torn last line left out", data: "a\nbb\ncc", want: []lineAt{{"bb", 2}, {"a", 0}}, torn: 2},
		{name: "only a torn line", data: "abc", torn: 3},
		{name: "CRLF", data: "a\r\nbb\r\n", want: []lineAt{{"bb", 3}, {"a", 0}}},
		{name: "empty lines skipped", data: "\n\na\n\r\n\nb\n", want: []lineAt{{"b", 7}, {"a", 2}}},
		{name: "long line", data: "a\n" + long + "\nb\n", want: []lineAt{{"b", 1003}, {long, 2}, {"a", 0}}},
		{name: "bound on a line start", data: "aaaa\nbb\ncc\n", maxBytes: 6, want: []lineAt{{"cc", 8}, {"bb", 5}}},
		{name: "bound cuts a line", data: "aaaa\nbb\ncc\n", maxBytes: 5, want: []lineAt{{"cc", 8}}, bounded: true},
		{name: "bound larger than file", data: "a\nb\n", maxBytes: 100, want: []lineAt{{"b", 2}, {"a", 0}}},
		{name: "bound inside a torn line", data: "a\nbbbbbb", maxBytes: 3, torn: 3, bounded: true},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 2, 3, 7, DefaultChunkSize} {
			t.Run(tt.name, func(t *testing.T) {
				got, r := readAll(t, tt.data, tt.maxBytes, 0, chunk)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("chunk %d: lines (-want +got):\n%s", chunk, diff)
				}
				if r.TornBytes() != tt.torn {
					t.Errorf("chunk %d: TornBytes = %d, want %d", chunk, r.TornBytes(), tt.torn)
				}
				if r.Bounded() != tt.bounded {
					t.Errorf("chunk %d: Bounded = %v, want %v", chunk, r.Bounded(), tt.bounded)
				}
				// The model agrees with the table.
				ml, mt, _ := model(tt.data, tt.maxBytes, 0)
				if diff := cmp.Diff(tt.want, ml); diff != "" || mt != tt.torn {
					t.Errorf("model disagrees (-want +got):\n%s torn %d", diff, mt)
				}
			})
		}
	}
}

// A line longer than the line bound is passed over and counted, whatever
// the chunk size; the lines around it are read as without it.
func TestReaderMaxLine(t *testing.T) {
	long := strings.Repeat("x", 50)
	tests := []struct {
		name     string
		data     string
		maxBytes int64
		want     []lineAt
		torn     int64
		long     int
		bounded  bool
	}{
		{name: "long line skipped", data: "a\n" + long + "\nb\n", want: []lineAt{{"b", 53}, {"a", 0}}, long: 1},
		{name: "long first line", data: long + "\nb\n", want: []lineAt{{"b", 51}}, long: 1},
		{name: "only a long line", data: long + "\n", long: 1},
		{name: "at the bound kept", data: strings.Repeat("y", 10) + "\n", want: []lineAt{{strings.Repeat("y", 10), 0}}},
		{name: "CR counts", data: strings.Repeat("y", 10) + "\r\n", long: 1},
		{name: "long torn tail", data: "a\n" + long, want: []lineAt{{"a", 0}}, torn: 50},
		{name: "long line cut by the byte bound", data: "a\n" + long + "\nb\n", maxBytes: 20, want: []lineAt{{"b", 53}}, bounded: true},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 2, 3, 7, DefaultChunkSize} {
			t.Run(tt.name, func(t *testing.T) {
				got, r := readAll(t, tt.data, tt.maxBytes, 10, chunk)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("chunk %d: lines (-want +got):\n%s", chunk, diff)
				}
				if r.TornBytes() != tt.torn || r.LongLines() != tt.long || r.Bounded() != tt.bounded {
					t.Errorf("chunk %d: TornBytes, LongLines, Bounded = %d, %d, %v, want %d, %d, %v", chunk, r.TornBytes(), r.LongLines(), r.Bounded(), tt.torn, tt.long, tt.bounded)
				}
				ml, mt, mlong := model(tt.data, tt.maxBytes, 10)
				if diff := cmp.Diff(tt.want, ml); diff != "" || mt != tt.torn || mlong != tt.long {
					t.Errorf("model disagrees (-want +got):\n%s torn %d long %d", diff, mt, mlong)
				}
			})
		}
	}
}

// counting is a reader at offsets that keeps the largest read asked of it.
type counting struct {
	r       io.ReaderAt
	largest int
}

func (c *counting) ReadAt(p []byte, off int64) (int, error) {
	c.largest = max(c.largest, len(p))
	return c.r.ReadAt(p, off)
}

// Neither a torn tail nor a line past the line bound is held: no read
// asks for more than about the bound, whatever their length.
func TestReaderHoldsNoLongLine(t *testing.T) {
	const maxLine = 1000
	data := "first\n" + strings.Repeat("z", 1<<20) + "\nlast\n" + strings.Repeat("t", 1<<20)
	c := &counting{r: strings.NewReader(data)}
	r := NewReader(c, int64(len(data)), 0)
	r.SetChunkSize(100)
	r.SetMaxLine(maxLine)
	var got []string
	for {
		line, _, err := r.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	if diff := cmp.Diff([]string{"last", "first"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if r.LongLines() != 1 || r.TornBytes() != 1<<20 {
		t.Errorf("LongLines = %d, TornBytes = %d, want 1, %d", r.LongLines(), r.TornBytes(), 1<<20)
	}
	if c.largest > 2*maxLine+100 {
		t.Errorf("a read of %d bytes: the long line or the torn tail was held", c.largest)
	}
}

func TestReaderReadsOnlyTheTail(t *testing.T) {
	data := strings.Repeat(strings.Repeat("y", 99)+"\n", 100000) // 10 MB
	r := NewReader(strings.NewReader(data), int64(len(data)), 0)
	for i := 0; i < 3; i++ {
		if _, _, err := r.Prev(); err != nil {
			t.Fatal(err)
		}
	}
	if r.BytesRead() > DefaultChunkSize {
		t.Errorf("read %d bytes for 3 short lines, want at most one chunk (%d)", r.BytesRead(), DefaultChunkSize)
	}
}

// shrinking is a file that was truncated after its size was taken.
type shrinking struct{ data []byte }

func (s shrinking) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(s.data[:len(s.data)/2]).ReadAt(p, off)
}

func TestReaderTruncatedUnderneath(t *testing.T) {
	data := []byte(strings.Repeat("line\n", 100))
	r := NewReader(shrinking{data}, int64(len(data)), 0)
	_, _, err := r.Prev()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Prev on a shrunk file: err = %v, want io.ErrUnexpectedEOF", err)
	}
	if _, _, err2 := r.Prev(); !errors.Is(err2, io.ErrUnexpectedEOF) {
		t.Errorf("the error is not sticky: %v", err2)
	}
}

func FuzzReader(f *testing.F) {
	f.Add("a\nbb\r\nccc", int64(0), 3)
	f.Add("\n\n\nx\n", int64(2), 1)
	f.Add(strings.Repeat("ab\n", 40), int64(17), 5)
	f.Fuzz(func(t *testing.T, data string, maxBytes int64, chunk int) {
		if chunk < 1 || chunk > 1<<16 {
			chunk = 1 + (chunk&0xff+0xff)%64
		}
		for _, maxLine := range []int64{0, int64(chunk%7) + 1} {
			want, torn, long := model(data, maxBytes, maxLine)
			got, r := readAll(t, data, maxBytes, maxLine, chunk)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("max line %d: lines (-want +got):\n%s", maxLine, diff)
			}
			if r.TornBytes() != torn || r.LongLines() != long {
				t.Fatalf("max line %d: TornBytes = %d, LongLines = %d, want %d, %d", maxLine, r.TornBytes(), r.LongLines(), torn, long)
			}
		}
	})
}
