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
// there), last first, without "\r\n"/"\n", empty ones left out.
func model(data string, maxBytes int64) (lines []lineAt, torn int64) {
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
			if l != "" {
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
	return lines, torn
}

func readAll(t testing.TB, data string, maxBytes int64, chunk int) ([]lineAt, *Reader) {
	t.Helper()
	r := NewReader(strings.NewReader(data), int64(len(data)), maxBytes)
	r.SetChunkSize(chunk)
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
				got, r := readAll(t, tt.data, tt.maxBytes, chunk)
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
				ml, mt := model(tt.data, tt.maxBytes)
				if diff := cmp.Diff(tt.want, ml); diff != "" || mt != tt.torn {
					t.Errorf("model disagrees (-want +got):\n%s torn %d", diff, mt)
				}
			})
		}
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
		want, torn := model(data, maxBytes)
		got, r := readAll(t, data, maxBytes, chunk)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("lines (-want +got):\n%s", diff)
		}
		if r.TornBytes() != torn {
			t.Fatalf("TornBytes = %d, want %d", r.TornBytes(), torn)
		}
	})
}
