package fsx_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/oo-family/oo-claude/internal/fsx"
	"golang.org/x/sys/unix"
)

// BenchmarkOpenRead: the checked open (Lstat, open with O_NONBLOCK, fstat,
// trust, clearing O_NONBLOCK) beside the open it replaced (open with
// O_NOFOLLOW, fstat), on a small regular file.
func BenchmarkOpenRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(path, []byte("12345\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	b.Run("checked", func(b *testing.B) {
		for b.Loop() {
			f, err := fsx.OpenRead(path)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("nofollow-only", func(b *testing.B) {
		for b.Loop() {
			f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Stat(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
}

// BenchmarkAppendLine: one line appended under the file's flock with the
// torn-line check, beside a bare O_APPEND write.
func BenchmarkAppendLine(b *testing.B) {
	dir := b.TempDir()
	line := []byte(`{"kind":"send","class":"queued-offline","line":"[t 📡] a line of a typical length for a receipt row"}`)
	b.Run("checked", func(b *testing.B) {
		path := filepath.Join(dir, "checked")
		for b.Loop() {
			if _, err := fsx.AppendLine(path, line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		path := filepath.Join(dir, "bare")
		buf := append(append([]byte{}, line...), '\n')
		for b.Loop() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(buf); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
}
