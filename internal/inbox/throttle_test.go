package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/internal/hostile"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// An admission prunes, at most once an hour, the ledger files untouched for
// longer than LedgerKeep whose entry is that old too (or empty); a file
// touched recently, or old but holding a recent entry, and anything that
// is not a ledger file stay.
func TestThrottlePrunes(t *testing.T) {
	now := time.Now()
	th := inbox.ThrottleFor(t.TempDir(), 30*time.Second, func() time.Time { return now })
	plant := func(sid, content string, mtime time.Time) string {
		t.Helper()
		path := th.KeyFile(sid, "mama")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return filepath.Base(path)
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(now.Add(-d).UnixMilli(), 10) + "\n" }
	old, day := now.Add(-25*time.Hour), 25*time.Hour
	gone := []string{plant("old", ms(day), old), plant("old-empty", "", old), plant("old-torn", "17967", old)}
	kept := []string{plant("fresh", ms(time.Hour), now.Add(-time.Hour)), plant("old-file-recent-entry", ms(time.Hour), old)}
	dir := filepath.Join(filepath.Dir(th.KeyFile("x", "y")))
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "notes.txt"), old, old)
	kept = append(kept, "notes.txt")

	admit := func(sid string) {
		t.Helper()
		if adm, err := th.Do(context.Background(), sid, "mama", func() error { return nil }); err != nil || !adm.Admitted {
			t.Fatalf("Do(%s) = %+v, %v", sid, adm, err)
		}
	}
	names := func() []string {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			if e.Name() != ".pruned" {
				out = append(out, e.Name())
			}
		}
		return out
	}
	admit("new")
	want := append(slices.Clone(kept), filepath.Base(th.KeyFile("new", "mama")))
	slices.Sort(want)
	if diff := cmp.Diff(want, names()); diff != "" {
		t.Errorf("after the first prune (-want +got):\n%s", diff)
	}
	for _, g := range gone {
		if slices.Contains(names(), g) {
			t.Errorf("%s was kept", g)
		}
	}

	// Within the hour no admission prunes again; after it, one does.
	late := plant("late", ms(day), old)
	admit("new2")
	if !slices.Contains(names(), late) {
		t.Fatal("pruned again within the hour")
	}
	mark := filepath.Join(dir, ".pruned")
	os.Chtimes(mark, now.Add(-2*time.Hour), now.Add(-2*time.Hour))
	admit("new3")
	if slices.Contains(names(), late) {
		t.Error("not pruned after the hour")
	}
}

// An interval longer than LedgerKeep is honoured only as far as LedgerKeep
// reaches: an entry that old counts as absent, pruned or not.
func TestThrottleLedgerKeep(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	th := inbox.ThrottleFor(t.TempDir(), 48*time.Hour, func() time.Time { return now })
	var got []bool
	for _, step := range []time.Duration{0, 23 * time.Hour, 2 * time.Hour} {
		now = now.Add(step)
		adm, err := th.Do(context.Background(), "s", "mama", func() error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, adm.Admitted)
	}
	if diff := cmp.Diff([]bool{true, false, true}, got); diff != "" {
		t.Errorf("admitted at 0 h, 23 h, 25 h (-want +got):\n%s", diff)
	}
}

// 8 processes take a throttle decision at once, for two senders: exactly
// one winner per (session, sender).
func TestThrottleLedgerProcesses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	sid := uuid.NewString()
	type out struct {
		from, said string
		err        error
	}
	outs := make(chan out, 16)
	for i := 0; i < 16; i++ {
		from := []string{"mama", "luna"}[i%2]
		go func() {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), "OO_CLAUDE_INBOX_HELPER=throttle", "HELPER_STATE="+state, "HELPER_SID="+sid, "HELPER_FROM="+from)
			b, err := cmd.Output()
			outs <- out{from, strings.TrimSpace(string(b)), err}
		}()
	}
	won := map[string]int{}
	for i := 0; i < 16; i++ {
		o := <-outs
		if o.err != nil {
			t.Fatalf("helper: %v", o.err)
		}
		if o.said == "won" {
			won[o.from]++
		} else if o.said != "dropped" {
			t.Fatalf("helper said %q", o.said)
		}
	}
	if diff := cmp.Diff(map[string]int{"mama": 1, "luna": 1}, won); diff != "" {
		t.Errorf("winners (-want +got):\n%s", diff)
	}
	dir := filepath.Join(state, inbox.ThrottleDir)
	all, err := os.ReadDir(dir)
	var ents []os.DirEntry
	for _, e := range all {
		if !strings.HasPrefix(e.Name(), ".") { // the prune mark
			ents = append(ents, e)
		}
	}
	if err != nil || len(ents) != 2 {
		t.Fatalf("ledger: %v %v; want one file per key", ents, err)
	}
	for _, e := range ents {
		if fi, err := e.Info(); err != nil || fi.Mode() != 0o600 {
			t.Errorf("ledger file %s: %v %v", e.Name(), fi, err)
		}
	}
}

// A key whose lock another process holds is not waited on without bound:
// Do answers ErrThrottleLocked after LockWait, naming the holder's pid,
// and write is not called.
func TestThrottleLockWaitIsBounded(t *testing.T) {
	th := inbox.ThrottleFor(t.TempDir(), 30*time.Second, nil)
	th.LockWait = 200 * time.Millisecond
	sid := uuid.NewString()
	pid := hostile.HoldLock(t, th.KeyFile(sid, "mama"))
	start := time.Now()
	called := false
	adm, err := th.Do(context.Background(), sid, "mama", func() error { called = true; return nil })
	took := time.Since(start)
	if !errors.Is(err, inbox.ErrThrottleLocked) || adm.Admitted || called {
		t.Fatalf("Do = %+v, %v (write called %v); want ErrThrottleLocked, nothing written", adm, err, called)
	}
	if want := fmt.Sprintf("pid %d", pid); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the holder (%s)", err, want)
	}
	// About LockWait; the upper bound only catches an unbounded wait and
	// is generous for a loaded machine.
	if took < th.LockWait || took > th.LockWait+30*time.Second {
		t.Errorf("Do answered after %v, want about %v", took, th.LockWait)
	}
	// Another key never waits for it.
	if adm, err := th.Do(context.Background(), sid, "luna", func() error { return nil }); err != nil || !adm.Admitted {
		t.Errorf("another sender: %+v, %v", adm, err)
	}
}

func TestThrottleRejectsNegative(t *testing.T) {
	th := inbox.ThrottleFor(t.TempDir(), -time.Second, nil)
	called := false
	if _, err := th.Do(context.Background(), "s", "f", func() error { called = true; return nil }); !errors.Is(err, inbox.ErrBadInterval) || called {
		t.Errorf("negative interval: %v, write called %v", err, called)
	}
}
