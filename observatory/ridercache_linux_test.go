//go:build linux

package observatory_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// cachedJSON is the document Build makes of st through the rider cache
// (with the clock now), as JSON.
func cachedJSON(t *testing.T, st *station.Station, all bool, now func() time.Time) []byte {
	t.Helper()
	doc, err := observatory.Build(context.Background(), observatory.WithFileNow(observatory.Options{Station: st, IncludeFinished: all}, now))
	if err != nil {
		t.Fatal(err)
	}
	b, err := doc.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// uncachedJSON is the document of st read without a cache (no state
// directory), as JSON.
func uncachedJSON(t *testing.T, st *station.Station, all bool) []byte {
	t.Helper()
	plain := *st
	plain.Paths.StateDir = ""
	return cachedJSON(t, &plain, all, settledLater)
}

// watchRiders makes c count the opens in every rider directory of st.
func watchRiders(t *testing.T, c *openCounter, st *station.Station, sessions int) {
	t.Helper()
	subs, err := filepath.Glob(filepath.Join(st.Paths.ProjectsDir, "*", "*", riderwalk.Dir))
	if err != nil || len(subs) != sessions {
		t.Fatalf("rider directories: %d, %v", len(subs), err)
	}
	for _, d := range subs {
		c.watch(t, d)
	}
}

// countedJSON is cachedJSON (now the cache's clock) with the opens in
// every rider directory of st counted.
func countedJSON(t *testing.T, st *station.Station, sessions int, all bool, now func() time.Time) ([]byte, *openCounter) {
	t.Helper()
	c := newOpenCounter(t)
	watchRiders(t, c, st, sessions)
	got := cachedJSON(t, st, all, now)
	c.drain(t)
	return got, c
}

func isTranscript(n string) bool { return strings.HasSuffix(n, transcriptfile.Ext) }
func isMeta(n string) bool       { return strings.HasSuffix(n, ".meta.json") }

// TestRiderCacheSecondBuildOpensNoRider: a Build of a station whose riders
// have settled keeps what it read of them, and the next Build opens no
// rider transcript and no meta file, and makes the same document, byte
// for byte, as a Build without the cache; with --all's every rider too,
// and with the projects directory named unclean.
// Before the cache, every Build opened each rider that may ride and the
// meta file of each it listed.
func TestRiderCacheSecondBuildOpensNoRider(t *testing.T) {
	const sessions, riders = 10, 10
	for _, c := range []struct{ all, slash bool }{{false, false}, {true, false}, {false, true}} {
		all := c.all
		st := bigStation(t, sessions, riders, 6)
		if c.slash { // a projects directory named with a trailing slash
			st.Paths.ProjectsDir += "/"
		}
		want := uncachedJSON(t, st, all)
		if got := cachedJSON(t, st, all, settledLater); !bytes.Equal(got, want) {
			t.Fatalf("all=%t: the first document differs from the uncached one:\n%s\nwant\n%s", all, got, want)
		}
		if _, err := os.Stat(observatory.RiderCacheFile(st.Paths)); err != nil {
			t.Fatalf("all=%t: no rider cache after the first Build: %v", all, err)
		}
		got, c := countedJSON(t, st, sessions, all, settledLater)
		if !bytes.Equal(got, want) {
			t.Fatalf("all=%t: the cached document differs from the uncached one:\n%s\nwant\n%s", all, got, want)
		}
		if n := c.sum(isTranscript) + c.sum(isMeta); n != 0 {
			t.Errorf("all=%t: the second Build opened %d rider files, want 0 (%v)", all, n, c.opens)
		}
	}
}

// TestRiderCacheReadsWhatChanged: after the cache holds every rider, a
// transcript that grew, a meta file rewritten, a rider made untrusted and
// a rider removed are each seen: the document is the uncached one's, and
// only the changed files are opened.
func TestRiderCacheReadsWhatChanged(t *testing.T) {
	const sessions, riders = 4, 4
	st := bigStation(t, sessions, riders, riders)
	cachedJSON(t, st, true, settledLater)
	dir := func(i int) string {
		d, err := filepath.Glob(filepath.Join(st.Paths.ProjectsDir, "*", "dddddddd-0000-4000-8000-00000000000"+string(rune('0'+i)), riderwalk.Dir))
		if err != nil || len(d) != 1 {
			t.Fatalf("session %d's rider directory: %v %v", i, d, err)
		}
		return d[0]
	}
	grown := filepath.Join(dir(0), "agent-r00.jsonl")
	fi, err := os.Stat(grown)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(grown, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	row := `{"type":"assistant","isSidechain":true,"agentId":"r00","timestamp":"2026-11-30T11:59:30Z","message":{"id":"m3","role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"Grown since."}]}}` + "\n"
	if _, err := f.WriteString(row); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(grown, fi.ModTime(), fi.ModTime()); err != nil { // the same mtime: size and ctime tell
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir(1), "agent-r02.meta.json"), `{"agentType":"reviewer","description":"rewritten","model":"m"}`+"\n", time.Time{})
	if err := os.Chmod(filepath.Join(dir(2), "agent-r00.jsonl"), 0o606); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"agent-r01.jsonl", "agent-r01.meta.json"} {
		if err := os.Remove(filepath.Join(dir(3), n)); err != nil {
			t.Fatal(err)
		}
	}
	want := uncachedJSON(t, st, true)
	for _, s := range []string{"Grown since.", `"description":"rewritten"`, "not trusted"} {
		if !bytes.Contains(want, []byte(s)) {
			t.Fatalf("the uncached document lacks %q (the fixture changed):\n%s", s, want)
		}
	}
	got, c := countedJSON(t, st, sessions, true, settledLater)
	if !bytes.Equal(got, want) {
		t.Fatalf("the cached document differs from the uncached one:\n%s\nwant\n%s", got, want)
	}
	// The grown transcript (not its meta file, unchanged), the rewritten
	// meta file, and the untrusted transcript's open (refused after its
	// fstat): nothing else.
	if n, m := c.sum(isTranscript), c.sum(isMeta); n != 2 || m != 1 {
		t.Errorf("opened %d transcripts and %d meta files, want 2 and 1 (%v)", n, m, c.opens)
	}
	// Kept again: the next Build opens only the untrusted one.
	got, c = countedJSON(t, st, sessions, true, settledLater)
	if !bytes.Equal(got, want) {
		t.Fatalf("the third document differs from the uncached one")
	}
	if n, m := c.sum(isTranscript), c.sum(isMeta); n != 1 || m != 0 {
		t.Errorf("then opened %d transcripts and %d meta files, want 1 and 0 (%v)", n, m, c.opens)
	}
}

// TestRiderCacheKeepsOnlySettled: riders written within fsx.SigSettle of
// the kernel's clock are not kept (a write in the same timestamp tick
// could leave their Sig as it is): no cache file is written, and the next
// Build reads them all again.
func TestRiderCacheKeepsOnlySettled(t *testing.T) {
	const sessions, riders = 3, 4
	st := bigStation(t, sessions, riders, riders)
	want := uncachedJSON(t, st, true)
	// The clock a file's ctime was just set by: nothing has settled.
	justNow := func() time.Time { return time.Now() }
	if got := cachedJSON(t, st, true, justNow); !bytes.Equal(got, want) {
		t.Fatalf("the document differs from the uncached one")
	}
	if _, err := os.Lstat(observatory.RiderCacheFile(st.Paths)); !os.IsNotExist(err) {
		t.Fatalf("a rider cache of unsettled riders: %v", err)
	}
	_, c := countedJSON(t, st, sessions, true, justNow)
	if n := c.sum(isTranscript); n != sessions*riders {
		t.Errorf("opened %d transcripts, want %d", n, sessions*riders)
	}
}

// TestRiderCacheHostileFile: a cache file that is a symlink, a FIFO,
// another format, cut short, or of another projects directory is an empty
// cache: the document is the uncached one's, Build does not block, and
// the first two are left as they are.
func TestRiderCacheHostileFile(t *testing.T) {
	const sessions, riders = 2, 3
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, path string, good []byte)
		kept  os.FileMode // the type left at path; 0: a regular cache
	}{
		{"symlink", func(t *testing.T, path string, good []byte) {
			other := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.WriteFile(other, good, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}, os.ModeSymlink},
		{"fifo", func(t *testing.T, path string, _ []byte) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, os.ModeNamedPipe},
		{"garbage", func(t *testing.T, path string, _ []byte) {
			if err := os.WriteFile(path, []byte("oo-claude rider cache 1\n\xff\xff\xff\xff"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, 0},
		{"cut short", func(t *testing.T, path string, good []byte) {
			if err := os.WriteFile(path, good[:len(good)-3], 0o600); err != nil {
				t.Fatal(err)
			}
		}, 0},
		{"another projects directory", func(t *testing.T, path string, good []byte) {
			b := bytes.Replace(good, []byte("/projects"), []byte("/projectz"), 1)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := bigStation(t, sessions, riders, riders)
			path := observatory.RiderCacheFile(st.Paths)
			cachedJSON(t, st, true, settledLater)
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Each reading's last text, forged: shown only if the
			// planted file were taken.
			forged := bytes.ReplaceAll(good, []byte("All done."), []byte("FORGED!!!"))
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			c.plant(t, path, forged)
			want := uncachedJSON(t, st, true)
			got := cachedJSON(t, st, true, settledLater)
			if !bytes.Equal(got, want) {
				t.Fatalf("the document differs from the uncached one:\n%s\nwant\n%s", got, want)
			}
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Type() != c.kept {
				t.Errorf("left a %v at the cache's path, want %v", fi.Mode().Type(), c.kept)
			}
		})
	}
}
