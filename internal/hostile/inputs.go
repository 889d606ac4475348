package hostile

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Inputs are the values a no-panic test passes where a function takes a
// string, a path, a number or bytes: empty, NUL, invalid UTF-8, traversal,
// 64 KiB strings; missing (inside the test's own directory: a function may
// make it), under a regular file, FIFO, directory, /dev/null and symlink
// paths;
// numbers and durations at their bounds; torn, empty and deeply nested
// JSON.
type Inputs struct {
	Strs   []string
	Paths  []string
	Ints   []int
	Durs   []time.Duration
	Floats []float64
	Bytes  [][]byte
	Dir    string // an empty directory
}

// InputsTB is what NewInputs needs of a test.
type InputsTB interface {
	Helper()
	Fatal(args ...any)
	TempDir() string
}

// NewInputs plants the paths Inputs name (a FIFO, a regular file, a
// symlink to it and an empty directory) in a directory of the test's own.
func NewInputs(t InputsTB) Inputs {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	file := filepath.Join(dir, "file")
	link := filepath.Join(dir, "link")
	empty := filepath.Join(dir, "empty")
	for _, err := range []error{
		unix.Mkfifo(fifo, 0o600),
		os.WriteFile(file, []byte("{\"a\":1}\n\x00\xff\n"), 0o600),
		os.Symlink(file, link),
		os.Mkdir(empty, 0o700),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return Inputs{
		Strs: []string{"", "abc", "a\x00b", "\xff\xfe\xfd", "../../etc", "/", "-1", " \t\n", "local_",
			"00000000-0000-0000-0000-000000000000", strings.Repeat("x", 1<<16)},
		Paths: []string{"", "a\x00b", "rel/x", filepath.Join(dir, "missing", "oo-claude", "x"), filepath.Join(file, "x"),
			empty, fifo, "/dev/null", link, file},
		Ints:   []int{0, -1, math.MinInt, math.MaxInt},
		Durs:   []time.Duration{0, -1, math.MinInt64, math.MaxInt64},
		Floats: []float64{0, -1, math.NaN(), math.Inf(1), math.MaxFloat64},
		Bytes: [][]byte{nil, {}, []byte("\x00"), []byte("{"), []byte("{}"), []byte("[]"), []byte("null"), []byte("\xff\xfe"),
			[]byte(`{"v":1}`), []byte(`{"v":1,"line":null,"from":7}`), []byte(`{"v":"1","id":[],"line":"\u0000"}`),
			[]byte(`{"type":"user","message":{"content":[{}]}}`), bytes.Repeat([]byte("["), 1<<14)},
		Dir: empty,
	}
}

// CallTB is what Call needs of a test.
type CallTB interface {
	Helper()
	Errorf(format string, args ...any)
}

// Call runs f on a goroutine of its own and reports a panic (with its
// stack) or a call that does not return within bound as a failure of desc.
// A fake's Fatalf inside f ends only that goroutine.
func Call(t CallTB, desc string, bound time.Duration, f func()) {
	t.Helper()
	var (
		done     = make(chan struct{})
		panicked any
		stack    []byte
	)
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				panicked, stack = r, debug.Stack()
			}
		}()
		f()
	}()
	select {
	case <-done:
	case <-time.After(bound):
		t.Errorf("%s: did not return within %v", desc, bound)
		return
	}
	if panicked != nil {
		t.Errorf("%s panicked: %v\n%s", desc, panicked, stack)
	}
}
