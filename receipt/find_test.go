package receipt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: the newest row naming the msg_id comes back as written, from
// a file whose rows span many read chunks; a missing id or file is
// ErrNotFound.
func TestFind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "receipts.jsonl")
	w := &Writer{Path: path}
	pad := strings.Repeat("x", 3000)
	for i := range 100 {
		id := fmt.Sprintf("m%d", i%40)
		if err := w.Append(map[string]any{"kind": "send", "msg_id": id, "n": i, "note": pad}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ id, want string }{{"m0", `"n":80`}, {"m39", `"n":79`}, {"m1", `"n":81`}} {
		row, err := Find(path, tt.id)
		if err != nil {
			t.Fatalf("Find(%s): %v", tt.id, err)
		}
		if !strings.Contains(string(row), tt.want) || !strings.HasPrefix(string(row), "{") || strings.Contains(string(row), "\n") {
			t.Errorf("Find(%s) = %.80s…, want the row with %s", tt.id, row, tt.want)
		}
	}
	if _, err := Find(path, "m4"+"00"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
	if _, err := Find(filepath.Join(dir, "none.jsonl"), "m1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: %v, want ErrNotFound", err)
	}
	if err := os.Symlink(path, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(filepath.Join(dir, "link"), "m1"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("symlink: %v, want a refusal", err)
	}
}
