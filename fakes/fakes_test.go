package fakes_test

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes"
)

// TestProgram: a Program runs the cleanups last first, each once, and
// removes its temporary directories when closed.
func TestProgram(t *testing.T) {
	var p fakes.Program
	var ran []int
	d1, d2 := p.TempDir(), p.TempDir()
	for _, d := range []string{d1, d2} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("TempDir %s: %v, %v; want a 0700 directory", d, fi, err)
		}
	}
	p.Cleanup(func() { ran = append(ran, 1) })
	p.Cleanup(func() {
		ran = append(ran, 2)
		p.Cleanup(func() { ran = append(ran, 3) }) // registered while closing: runs too
	})
	p.Close()
	p.Close()
	if diff := cmp.Diff([]int{2, 3, 1}, ran); diff != "" {
		t.Errorf("cleanups ran (-want +got):\n%s", diff)
	}
	for _, d := range []string{d1, d2} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s after Close: %v, want it removed", d, err)
		}
	}
}
