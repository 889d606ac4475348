//go:build linux

package station_test

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/oo-family/oo-claude/station"
)

// A process whose stat cannot be read because the reader has no
// descriptor left is alive: a watch ends no session, and gc collects
// nothing, for a read that failed (EMFILE says nothing of the process).
// Not parallel: the descriptor limit is the test process's.
func TestAliveWithoutDescriptors(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = 64
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot lower the descriptor limit: %v", err)
	}
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			t.Error(err)
		}
	}()
	for {
		f, err := os.Open(os.DevNull)
		if errors.Is(err, syscall.EMFILE) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
		if len(held) > 1000 {
			t.Fatal("no EMFILE under a limit of 64")
		}
	}
	var p station.Proc
	alive := p.Alive(os.Getpid(), "")
	_, infoErr := p.Info(os.Getpid())
	for _, f := range held {
		f.Close()
	}
	held = nil
	if !errors.Is(infoErr, syscall.EMFILE) {
		t.Fatalf("Info without descriptors: %v, want EMFILE", infoErr)
	}
	if !alive {
		t.Error("Alive without descriptors is false: a running process was called gone")
	}
	if p.Alive(1<<30, "") {
		t.Error("Alive of a pid that runs nothing, with descriptors again, is true")
	}
}
