//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a new pseudo-terminal: its master, for the test to read
// what is written to the terminal, and its slave, for the child.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pty's slave: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// TestVersionOnASilentTerminal: a verb run in the foreground of a terminal
// that answers no query (TERM=xterm-256color, not tmux) prints its output
// at once and writes nothing else to the terminal: no escape sequence (a
// query of the background colour or of the cursor), no wait for an answer
// that never comes. Bubble Tea v1's package init asked the background
// colour of every verb's terminal before main and waited up to 5 s for it.
func TestVersionOnASilentTerminal(t *testing.T) {
	t.Parallel()
	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(ctx, t, []string{"TERM=xterm-256color", "LANG=C.UTF-8"}, "version")
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, &stderr
	// Its own session, the pty its controlling terminal: the child is the
	// terminal's foreground process group, as a verb typed at a shell is.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	got := make(chan []byte, 1)
	go func() {
		// Until the child is gone and the slave closed (EIO), or the
		// master closed by the test's cleanup.
		b, _ := io.ReadAll(master)
		got <- b
	}()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the child's copy alone holds it
	err := cmd.Wait()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("version: %v\n%s", err, stderr.String())
	}
	var out []byte
	select {
	case out = <-got:
	case <-ctx.Done():
		t.Fatal("the terminal's output never ended")
	}
	t.Logf("oo-claude version on a silent terminal: %v, wrote %q", took, out)
	if bytes.IndexByte(out, 0x1b) >= 0 {
		t.Errorf("version wrote an escape sequence to the terminal: %q", out)
	}
	if !strings.HasPrefix(string(out), "oo-claude ") {
		t.Errorf("version wrote %q to the terminal, want its version line", out)
	}
	// 0.26 s here at load 25, 1.2 s with -race beside the screen tests;
	// the old init alone waited 5 s for its answer, so the bound sits
	// just under that, for a loaded machine.
	if took > 4*time.Second {
		t.Errorf("version took %v on a terminal that answers no query, want < 4 s", took)
	}
}
