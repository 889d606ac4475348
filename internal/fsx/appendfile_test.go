package fsx_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// AppendFile appends a small file's content whole to what the buffer
// holds, whatever room the buffer has; a file over the bound is
// ErrTooLarge and leaves the buffer as it was. (The hostile kinds are in
// TestHostileTypesRefusedAtOnce.)
func TestAppendFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	row := `{"pid":42,"sessionId":"017c3f59-43cc-4dc8-bfb6-5e9a5625a864"}`
	tests := []struct {
		name    string
		content string
		buf     []byte
		max     int
		want    string
		err     error
	}{
		{"into nil", row, nil, 1 << 10, row, nil},
		{"after what the buffer holds", row, []byte("prev|"), 1 << 10, "prev|" + row, nil},
		{"into spare room", row, make([]byte, 3, 4096), 1 << 10, "\x00\x00\x00" + row, nil},
		{"empty file", "", []byte("prev|"), 1 << 10, "prev|", nil},
		{"exactly the bound", strings.Repeat("x", 64), nil, 64, strings.Repeat("x", 64), nil},
		{"over the bound", strings.Repeat("x", 65), []byte("prev|"), 64, "prev|", fsx.ErrTooLarge},
		{"large, in pieces", strings.Repeat("0123456789", 20000), nil, 1 << 20, strings.Repeat("0123456789", 20000), nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write("f"+string(rune('a'+i)), tt.content)
			got, err := fsx.AppendFile(tt.buf, p, tt.max)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("got %q, want %q", trim(got), trim([]byte(tt.want)))
			}
		})
	}
	if _, err := fsx.AppendFile(nil, filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
}

func trim(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// AppendFile closes the descriptor it opened once: a second close of the
// same number would close whatever another goroutine opened in between
// (it reuses the lowest free number), so a file held by another goroutine
// must stay open however many reads run beside it.
func TestAppendFileClosesOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "row.json")
	if err := os.WriteFile(p, []byte(`{"pid":42}`), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20000; i++ {
			if _, err := fsx.AppendFile(nil, p, 1024); err != nil {
				t.Errorf("AppendFile: %v", err)
				return
			}
		}
	}()
	held, broken := 0, 0
	for {
		select {
		case <-done:
			t.Logf("%d files held beside the reads, %d closed under their holder", held, broken)
			if broken > 0 {
				t.Errorf("%d of %d files held by another goroutine were closed by AppendFile's reads", broken, held)
			}
			return
		default:
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		held++
		if _, err := f.Stat(); err != nil {
			broken++
		}
		f.Close()
	}
}
