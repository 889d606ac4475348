package station

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// cacheStation is a station of rows live registry rows (pids 3000 on,
// named "row-NNNN", ids ...-NNNN) with a state directory, its /proc a
// directory of stat files, and its row cache's clock an hour ahead, so
// that every row is settled at once (rowcache.go). reads lists the rows
// read from their files, in no order.
type cacheStation struct {
	*Station
	mu    sync.Mutex
	reads []string
}

func newCacheStation(t *testing.T, rows int) *cacheStation {
	t.Helper()
	dir := t.TempDir()
	p := Paths{SessionsDir: filepath.Join(dir, "sessions"), StateDir: filepath.Join(dir, "state")}
	for _, d := range []string{p.SessionsDir, p.StateDir, filepath.Join(dir, "proc")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	c := &cacheStation{Station: &Station{Paths: p, Proc: Proc{Root: filepath.Join(dir, "proc")}}}
	for i := range rows {
		c.write(t, 3000+i, fmt.Sprintf("row-%04d", i))
	}
	c.fileNow = func() time.Time { return time.Now().Add(time.Hour) }
	c.rowRead = func(name string) {
		c.mu.Lock()
		c.reads = append(c.reads, name)
		c.mu.Unlock()
	}
	return c
}

// write writes the row of pid, named name, and makes pid live.
func (c *cacheStation) write(t *testing.T, pid int, name string) {
	t.Helper()
	sid := fmt.Sprintf("cccccccc-0000-4000-8000-%012d", pid)
	row := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"cwd":"/home/u/p","startedAt":%d,"procStart":"777","name":%q,"status":"idle"}`, pid, sid, 1e12+int64(pid), name)
	if err := os.WriteFile(filepath.Join(c.Paths.SessionsDir, strconv.Itoa(pid)+".json"), []byte(row), 0o644); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(c.Proc.Root, strconv.Itoa(pid))
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (claude) S 1%s 777 0 0\n", pid, strings.Repeat(" 0", 17))
	if err := os.WriteFile(filepath.Join(d, "stat"), []byte(stat), 0o600); err != nil {
		t.Fatal(err)
	}
}

// resolve resolves target, returning what it found and the rows it read.
func (c *cacheStation) resolve(t *testing.T, target string) (Target, []string, error) {
	t.Helper()
	c.mu.Lock()
	c.reads = nil
	c.mu.Unlock()
	got, err := c.Resolve(target)
	c.mu.Lock()
	defer c.mu.Unlock()
	reads := slices.Clone(c.reads)
	slices.Sort(reads)
	return got, reads, err
}

// cache reads s's row cache file.
func (c *cacheStation) cache(t *testing.T) *rowCache {
	t.Helper()
	b, err := os.ReadFile(c.rowCacheFile())
	if err != nil {
		t.Fatal(err)
	}
	rc, ok := parseRowCache(string(b), c.Paths.SessionsDir)
	if !ok {
		t.Fatalf("the row cache does not parse")
	}
	return rc
}

func sidOf(pid int) string { return fmt.Sprintf("cccccccc-0000-4000-8000-%012d", pid) }

// Once written, the cache answers for every settled row: a name, a full
// id, an id prefix and a fragment read the matching row's file alone, and
// the directory is not listed again (its listing is in the cache).
func TestRowCacheReadsOnlyTheMatch(t *testing.T) {
	c := newCacheStation(t, 50)
	if _, reads, err := c.resolve(t, "row-0007"); err != nil || len(reads) != 50 {
		t.Fatalf("first resolve: %v, %d rows read; want every row read", err, len(reads))
	}
	rc := c.cache(t)
	if len(rc.rows) != 50 || rc.dir == (fsx.Sig{}) {
		t.Fatalf("cache holds %d rows, directory kept %v; want 50 and the listing", len(rc.rows), rc.dir != (fsx.Sig{}))
	}
	for _, r := range rc.rows {
		pid, _ := strconv.Atoi(strings.TrimSuffix(r.file, ".json"))
		if !r.ok || r.sid != sidOf(pid) || r.name != fmt.Sprintf("row-%04d", pid-3000) {
			t.Fatalf("cached row %+v: not what its file says", r)
		}
	}
	for _, tt := range []struct{ target, how string }{
		{"row-0007", MatchName},
		{sidOf(3007), MatchID},
		{strings.ToUpper(sidOf(3007)), MatchID},
		{"cccccccc-0000-4000-8000-00000000300", ""},
		{"w-0007", MatchFragment},
	} {
		got, reads, err := c.resolve(t, tt.target)
		if tt.how == "" { // a prefix of ten ids
			if !errors.Is(err, ErrAmbiguousTarget) {
				t.Errorf("Resolve(%q) = %+v, %v; want ambiguous", tt.target, got, err)
			}
			continue
		}
		if err != nil || got.SessionID != sidOf(3007) {
			t.Errorf("Resolve(%q) = %+v, %v; want %s", tt.target, got, err, sidOf(3007))
		}
		if !slices.Equal(reads, []string{"3007.json"}) {
			t.Errorf("Resolve(%q) read %v; want 3007.json alone", tt.target, reads)
		}
	}
}

// A row rewritten in place, to the same size, is read again: a row the
// cache holds is one whose Sig (size, times, inode) its file still has.
// With the real clock, a row just written is not even kept, so a rewrite
// within the kernel's timestamp tick cannot go unseen.
func TestRowCacheSeesARewrite(t *testing.T) {
	for _, clock := range []string{"settled", "real"} {
		t.Run(clock, func(t *testing.T) {
			c := newCacheStation(t, 40)
			if clock == "real" {
				c.fileNow = nil
			}
			if _, _, err := c.resolve(t, "row-0001"); err != nil {
				t.Fatal(err)
			}
			// Row 3002 takes row 3001's name, in the same number of bytes.
			c.write(t, 3002, "row-0001")
			if clock == "settled" {
				// The rewrite may fall within the timestamp tick of the
				// first write: only its times (set here, as a later
				// tick would) tell it from the row the cache holds.
				later := time.Now().Add(time.Minute)
				if err := os.Chtimes(filepath.Join(c.Paths.SessionsDir, "3002.json"), later, later); err != nil {
					t.Fatal(err)
				}
			}
			got, reads, err := c.resolve(t, "row-0001")
			if !errors.Is(err, ErrAmbiguousTarget) {
				t.Fatalf("Resolve after the rewrite = %+v, %v (read %v); want ambiguous", got, err, reads)
			}
			if clock == "settled" && c.cache(t).dir == (fsx.Sig{}) {
				t.Fatal("the cache rewritten for a row dropped the listing it had")
			}
			if got, _, err := c.resolve(t, "row-0002"); !errors.Is(err, ErrUnknownTarget) {
				t.Fatalf("Resolve of the old name = %+v, %v; want unknown", got, err)
			}
		})
	}
	t.Run("real clock keeps nothing fresh", func(t *testing.T) {
		c := newCacheStation(t, 40)
		c.fileNow = nil
		if _, _, err := c.resolve(t, "row-0001"); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(c.rowCacheFile()); err == nil {
			t.Fatalf("a cache of rows just written was written (%d bytes)", len(b))
		}
	})
}

// A row added or removed changes the directory's Sig: the listing is read
// again, the new row found, the removed one gone.
func TestRowCacheSeesTheListingChange(t *testing.T) {
	c := newCacheStation(t, 40)
	if _, _, err := c.resolve(t, "row-0001"); err != nil {
		t.Fatal(err)
	}
	c.write(t, 4000, "newcomer")
	if got, _, err := c.resolve(t, "newcomer"); err != nil || got.SessionID != sidOf(4000) {
		t.Fatalf("Resolve(newcomer) = %+v, %v", got, err)
	}
	if err := os.Remove(filepath.Join(c.Paths.SessionsDir, "3005.json")); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.resolve(t, "row-0005"); !errors.Is(err, ErrUnknownTarget) {
		t.Fatalf("Resolve of a removed row = %+v, %v; want unknown", got, err)
	}
	if n := len(c.cache(t).rows); n != 40 {
		t.Fatalf("cache holds %d rows; want 40", n)
	}
}

// A registry that shrinks below cacheFrom rows empties its cache once, so
// later resolves do not read and parse rows that are gone; the rows left
// are still found, each read from its file.
func TestRowCacheEmptiedBelowItsFloor(t *testing.T) {
	c := newCacheStation(t, 40)
	if _, _, err := c.resolve(t, "row-0001"); err != nil {
		t.Fatal(err)
	}
	if n := len(c.cache(t).rows); n != 40 {
		t.Fatalf("cache holds %d rows; want 40", n)
	}
	for i := 1; i < 40; i++ {
		if err := os.Remove(filepath.Join(c.Paths.SessionsDir, strconv.Itoa(3000+i)+".json")); err != nil {
			t.Fatal(err)
		}
	}
	var emptied os.FileInfo
	for i := range 2 {
		got, reads, err := c.resolve(t, "row-0000")
		if err != nil || got.SessionID != sidOf(3000) || !slices.Equal(reads, []string{"3000.json"}) {
			t.Fatalf("Resolve(row-0000) at 1 row = %+v, %v, reads %v", got, err, reads)
		}
		if rc := c.cache(t); len(rc.rows) != 0 || rc.dir != (fsx.Sig{}) {
			t.Fatalf("below %d rows the cache holds %d rows, listing %v; want none", cacheFrom, len(rc.rows), rc.dir)
		}
		fi, err := os.Stat(c.rowCacheFile())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			emptied = fi
		} else if !os.SameFile(fi, emptied) {
			t.Fatal("the emptied cache was swapped again: a registry below the floor empties it once")
		}
	}
	if _, _, err := c.resolve(t, "row-0005"); !errors.Is(err, ErrUnknownTarget) {
		t.Fatalf("Resolve of a removed row: %v; want unknown", err)
	}
}

// The cache only chooses: a cache that says a row is named what its file
// does not say (a stale or forged cache, with the file's own Sig) finds
// nothing, since every row it lets through is read again.
func TestRowCacheCannotForgeAMatch(t *testing.T) {
	c := newCacheStation(t, 40)
	if _, _, err := c.resolve(t, "row-0001"); err != nil {
		t.Fatal(err)
	}
	rc := c.cache(t)
	entries := slices.Clone(rc.rows)
	for i, r := range entries {
		if r.file == "3009.json" {
			entries[i].name = "forged"
		}
	}
	if err := os.WriteFile(c.rowCacheFile(), appendRowCache(nil, c.Paths.SessionsDir, rc.dir, entries), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, reads, err := c.resolve(t, "forged"); !errors.Is(err, ErrUnknownTarget) || !slices.Equal(reads, []string{"3009.json"}) {
		t.Fatalf("Resolve(forged) = %+v, %v, read %v; want unknown after reading 3009.json", got, err, reads)
	}
}

// Below cacheFrom rows there is no cache; without a state directory, or
// with one others can write, none is read or written; a cache file that
// is not a regular file is left as it is, never followed or blocked on;
// one that is not a cache is replaced. Every resolve still answers.
func TestRowCacheRefusesWhatItCannotTrust(t *testing.T) {
	resolveOK := func(t *testing.T, c *cacheStation) {
		t.Helper()
		for range 2 {
			if got, _, err := c.resolve(t, "row-0003"); err != nil || got.SessionID != sidOf(3003) {
				t.Fatalf("Resolve = %+v, %v", got, err)
			}
		}
	}
	t.Run("few rows", func(t *testing.T) {
		c := newCacheStation(t, cacheFrom-1)
		resolveOK(t, c)
		if _, err := os.Lstat(c.rowCacheFile()); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a cache at %d rows: %v", cacheFrom-1, err)
		}
	})
	t.Run("no state dir", func(t *testing.T) {
		c := newCacheStation(t, 40)
		if err := os.Remove(c.Paths.StateDir); err != nil {
			t.Fatal(err)
		}
		resolveOK(t, c)
		if _, err := os.Lstat(c.Paths.StateDir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the state directory was made: %v", err)
		}
	})
	t.Run("state dir others can write", func(t *testing.T) {
		c := newCacheStation(t, 40)
		if err := os.Chmod(c.Paths.StateDir, 0o777); err != nil {
			t.Fatal(err)
		}
		resolveOK(t, c)
		if _, err := os.Lstat(c.rowCacheFile()); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a cache in an untrusted directory: %v", err)
		}
	})
	t.Run("symlink", func(t *testing.T) {
		c := newCacheStation(t, 40)
		other := filepath.Join(t.TempDir(), "elsewhere")
		if err := os.WriteFile(other, []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, c.rowCacheFile()); err != nil {
			t.Fatal(err)
		}
		resolveOK(t, c)
		if b, err := os.ReadFile(other); err != nil || string(b) != "keep" {
			t.Fatalf("the symlink's target: %q, %v", b, err)
		}
		if fi, err := os.Lstat(c.rowCacheFile()); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the symlink was replaced: %v", err)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		c := newCacheStation(t, 40)
		if err := syscall.Mkfifo(c.rowCacheFile(), 0o600); err != nil {
			t.Fatal(err)
		}
		resolveOK(t, c)
		if fi, err := os.Lstat(c.rowCacheFile()); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("the FIFO was replaced: %v", err)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		c := newCacheStation(t, 40)
		if err := os.WriteFile(c.rowCacheFile(), []byte(cacheMagic+"\xff\xff\xff\xff"), 0o600); err != nil {
			t.Fatal(err)
		}
		resolveOK(t, c)
		if n := len(c.cache(t).rows); n != 40 {
			t.Fatalf("the garbage was replaced by a cache of %d rows; want 40", n)
		}
	})
	t.Run("another directory's", func(t *testing.T) {
		c := newCacheStation(t, 40)
		resolveOK(t, c)
		b, err := os.ReadFile(c.rowCacheFile())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := parseRowCache(string(b), c.Paths.SessionsDir+"x"); ok {
			t.Fatal("a cache parsed as another directory's")
		}
	})
}

// FuzzParseRowCache: any bytes parse without a panic, and what parses is
// whole and sound, and written back is the same bytes.
func FuzzParseRowCache(f *testing.F) {
	const dir = "/s"
	f.Add(string(appendRowCache(nil, dir, fsx.Sig{Dev: 1, Ino: 2, Size: 3, Mtime: 4, Ctime: 5}, []cachedRow{
		{file: "12.json", sig: fsx.Sig{Ino: 9, Size: 100}, ok: true, name: "n", sid: "s"},
		{file: "13.json"},
	})))
	f.Add(cacheMagic)
	f.Fuzz(func(t *testing.T, b string) {
		c, ok := parseRowCache(b, dir)
		if !ok {
			return
		}
		for _, r := range c.rows {
			if !isRowName(r.file) {
				t.Fatalf("row file %q", r.file)
			}
		}
		if again := string(appendRowCache(nil, dir, c.dir, c.rows)); again != b {
			t.Fatalf("written back:\n%q\nparsed from:\n%q", again, b)
		}
	})
}
