//go:build linux

package observatory_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/observatory"
)

// openCounter counts the opens of files in the directories it watches
// (inotify's IN_OPEN, which the kernel queues as each open happens), by
// file name.
type openCounter struct {
	fd    int
	dirs  map[int32]string
	opens map[string]int // by name, over every directory
}

func newOpenCounter(tb testing.TB) *openCounter {
	tb.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		tb.Skipf("inotify: %v", err)
	}
	tb.Cleanup(func() { unix.Close(fd) })
	return &openCounter{fd: fd, dirs: map[int32]string{}, opens: map[string]int{}}
}

func (c *openCounter) watch(tb testing.TB, dir string) {
	tb.Helper()
	wd, err := unix.InotifyAddWatch(c.fd, dir, unix.IN_OPEN)
	if err != nil {
		tb.Fatalf("watch %s: %v", dir, err)
	}
	c.dirs[int32(wd)] = dir
}

// drain reads every queued event into opens.
func (c *openCounter) drain(tb testing.TB) {
	tb.Helper()
	buf := make([]byte, 1<<16)
	for {
		n, err := unix.Read(c.fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return
		}
		if err != nil {
			tb.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				tb.Fatal("inotify queue overflow")
			}
			name := string(buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)])
			if name = strings.TrimRight(name, "\x00"); name != "" && ev.Mask&unix.IN_ISDIR == 0 {
				c.opens[name]++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// sum is the opens of the names match accepts.
func (c *openCounter) sum(match func(name string) bool) int {
	n := 0
	for name, k := range c.opens {
		if match(name) {
			n += k
		}
	}
	return n
}

// TestBuildOpensPerRider counts the files Build opens on a station of 20
// sessions × 10 riders that all changed within the riding window (half
// of them riding): each rider transcript is opened once, the meta file
// only of a rider the document lists (a riding one), an inbox's side
// files once each and only those that exist, and a session's process
// entry once (the registry's liveness check; its doorman's heartbeat,
// naming the same process, asks no second time). Before, every rider's
// meta file was opened, listed or not, and the doorman's pid was read
// from the process table again.
func TestBuildOpensPerRider(t *testing.T) {
	const sessions, riders = 20, 10
	st := bigStation(t, sessions, riders, riders)
	c := newOpenCounter(t)
	subs, err := filepath.Glob(filepath.Join(st.Paths.ProjectsDir, "*", "*", riderwalk.Dir))
	if err != nil || len(subs) != sessions {
		t.Fatalf("rider directories: %d, %v", len(subs), err)
	}
	for _, d := range subs {
		c.watch(t, d)
	}
	c.watch(t, st.Paths.InboxDir)
	procs, err := os.ReadDir(st.Proc.Root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		c.watch(t, filepath.Join(st.Proc.Root, p.Name()))
	}

	doc, err := observatory.Build(context.Background(), observatory.Options{Station: st})
	if err != nil {
		t.Fatal(err)
	}
	c.drain(t)
	listed := 0
	for _, s := range doc.Sessions {
		listed += len(s.Riders)
	}
	if listed != sessions*riders/2 {
		t.Fatalf("%d riders listed, want %d (the fixture changed)", listed, sessions*riders/2)
	}
	for _, k := range []struct {
		what  string
		match func(string) bool
		most  int
	}{
		{"rider transcripts", func(n string) bool { return strings.HasSuffix(n, transcriptfile.Ext) }, sessions * riders},
		{"rider meta files", func(n string) bool { return strings.HasSuffix(n, ".meta.json") }, listed},
		{"inbox files", func(n string) bool { return strings.HasSuffix(n, ".inbox") }, sessions},
		{"offset files", func(n string) bool { return strings.HasSuffix(n, ".offset") }, sessions},
		{"heartbeats", func(n string) bool { return strings.HasSuffix(n, ".doorman.json") }, sessions},
		{"process entries", func(n string) bool { return n == "stat" }, sessions},
	} {
		if got := c.sum(k.match); got > k.most {
			t.Errorf("%s opened %d times, want at most %d (%s)", k.what, got, k.most, fmt.Sprint(c.opens))
		}
	}
	if got := c.sum(func(string) bool { return true }); got > sessions*riders+listed+4*sessions {
		t.Errorf("%d opens in all, want at most %d", got, sessions*riders+listed+4*sessions)
	}
}
