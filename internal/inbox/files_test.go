package inbox_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// ReadOffset is the one reader of <inbox>.offset: an empty file is an
// unknown offset (where the doorman and the observatory used to disagree).
func TestReadOffset(t *testing.T) {
	tests := []struct {
		name    string
		content string // "-" for no file
		want    int64
		err     error
	}{
		{"decimal and newline", "1234\n", 1234, nil},
		{"no newline", "7", 7, nil},
		{"zero", "0\n", 0, nil},
		{"missing", "-", 0, fs.ErrNotExist},
		{"empty", "", 0, inbox.ErrBadOffset},
		{"spaces", "  \n", 0, inbox.ErrBadOffset},
		{"negative", "-5\n", 0, inbox.ErrBadOffset},
		{"garbage", "12 apples\n", 0, inbox.ErrBadOffset},
		{"too long", strings.Repeat("1", 80), 0, inbox.ErrBadOffset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x.offset")
			if tt.content != "-" {
				if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := inbox.ReadOffset(p)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Errorf("ReadOffset = %d, %v; want %d, %v", got, err, tt.want, tt.err)
			}
		})
	}
	t.Run("round trip", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x.offset")
		if err := inbox.WriteOffset(p, 99); err != nil {
			t.Fatal(err)
		}
		if got, err := inbox.ReadOffset(p); got != 99 || err != nil {
			t.Errorf("ReadOffset after WriteOffset(99) = %d, %v", got, err)
		}
	})
}

// An ack file whose first line has no newline for megabytes is read in
// bounded memory (defect 5: a 700 MiB ack file without a newline was read
// whole at start), and the acks after it are still found.
func TestReadAcksBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.ack")
	o := int64(3)
	a := inboxv1.Ack{TS: "2026-12-01T09:00:00.000Z", SHA256: strings.Repeat("a", 64), Class: inboxv1.AckDeliveredSteer, LineOffset: &o}
	big := strings.Repeat("x", 32<<20)
	if err := os.WriteFile(p, []byte(big+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := inbox.AppendAck(p, a); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	acks, end, err := inbox.ReadAcks(p, 0)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]inboxv1.Ack{a}, acks); diff != "" {
		t.Errorf("acks (-want +got):\n%s", diff)
	}
	if fi, _ := os.Stat(p); end != fi.Size() {
		t.Errorf("end %d, want the file's size %d", end, fi.Size())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading the ack file allocated %d MiB; want it bounded (< 4 MiB) for a 32 MiB line", alloc>>20)
	}
}
