package observatory

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/transcript"
)

// cacheSamples are readings of every shape: with and without a first
// row's time (in UTC and in a zone), final or not, with and without a
// meta file's part.
func cacheSamples() []cachedRider {
	sig := func(n int64) fsx.Sig {
		return fsx.Sig{Dev: 2049, Ino: uint64(n), Size: n * 10, Mtime: n << 30, Ctime: n<<30 + 7}
	}
	return []cachedRider{
		{rel: "-home-u-p/aaaa/subagents/agent-a.jsonl", sig: sig(1), agent: "a", rows: 4,
			started: time.Date(2026, 11, 30, 11, 59, 0, 123, time.UTC), lastStep: "Bash: ls", lastText: "",
			metaSig: sig(2), agentType: "general-purpose", description: "task a", model: "claude-haiku-5-5"},
		{rel: "-home-u-p/aaaa/subagents/workflows/run-1/agent-b.jsonl", sig: sig(3), agent: "b", rows: 0, final: true,
			lastText: "All done. ✓"},
		{rel: "-home-u-p/bbbb/subagents/agent-c.jsonl", sig: sig(4), agent: "c", rows: 1 << 40,
			started: time.Date(2026, 11, 30, 13, 0, 0, 0, time.FixedZone("", 2*3600)), lastStep: strings.Repeat("x", 5000)},
	}
}

// TestRiderCacheRoundTrip: what appendRiderCache writes, indexRiderCache
// and decodeRider read back as it was; one byte less, or one more, or
// another projects directory, is no cache.
func TestRiderCacheRoundTrip(t *testing.T) {
	want := cacheSamples()
	b := string(appendRiderCache(nil, "/home/u/.claude/projects", want))
	at, offs, ok := indexRiderCache(b, "/home/u/.claude/projects")
	if !ok || len(offs) != len(want) {
		t.Fatalf("index: %v, %d readings", ok, len(offs))
	}
	for _, w := range want {
		i, ok := at[w.rel]
		if !ok {
			t.Fatalf("%s not indexed", w.rel)
		}
		got, _, ok := decodeRider(b[offs[i]:])
		if !ok || !reflect.DeepEqual(got, w) {
			t.Errorf("decoded %+v, %v\nwant %+v", got, ok, w)
		}
		if !got.started.Equal(w.started) || got.started.Format(time.RFC3339Nano) != w.started.Format(time.RFC3339Nano) {
			t.Errorf("started %v, want %v", got.started, w.started)
		}
	}
	for _, bad := range []string{b[:len(b)-1], b + "x", strings.Replace(b, "projects", "projectz", 1)} {
		if _, _, ok := indexRiderCache(bad, "/home/u/.claude/projects"); ok {
			t.Errorf("a damaged cache (%d bytes) was taken", len(bad))
		}
	}
	// The same path twice is a forged file: refused whole.
	twice := string(appendRiderCache(nil, "/p", []cachedRider{want[0], want[0]}))
	if _, _, ok := indexRiderCache(twice, "/p"); ok {
		t.Error("a cache holding one path twice was taken")
	}
	// A path that climbs out of the projects directory, or is not a
	// rider transcript's: refused.
	for _, rel := range []string{"../x/agent-a.jsonl", "/abs/agent-a.jsonl", "a/./agent-a.jsonl", "a/notes.jsonl", "a/agent-a.json"} {
		e := want[0]
		e.rel = rel
		if _, _, ok := indexRiderCache(string(appendRiderCache(nil, "/p", []cachedRider{e})), "/p"); ok {
			t.Errorf("a reading of path %q was taken", rel)
		}
	}
}

// FuzzRiderCache: any bytes are a cache or none, never a panic or a
// reading past the file's end; a reading that decodes encodes to the
// same bytes.
func FuzzRiderCache(f *testing.F) {
	f.Add(string(appendRiderCache(nil, "/p", cacheSamples())))
	f.Add(riderCacheMagic)
	f.Add(riderCacheMagic + "\x02\x00\x00\x00/p\xff\xff\xff\x7f")
	f.Fuzz(func(t *testing.T, b string) {
		_, offs, ok := indexRiderCache(b, "/p")
		if !ok {
			return
		}
		var all []cachedRider
		for _, off := range offs {
			e, _, ok := decodeRider(b[off:])
			if !ok {
				t.Fatalf("an indexed reading at %d does not decode", off)
			}
			all = append(all, e)
		}
		if again := string(appendRiderCache(nil, "/p", all)); again != b {
			t.Fatalf("re-encoded %q, read %q", again, b)
		}
	})
}

// TestRiderCacheKeepsNoHugeString: a rider whose last text is longer than
// a kept string may be is not kept (the file would be refused whole);
// one beside it is.
func TestRiderCacheKeepsNoHugeString(t *testing.T) {
	c := &riderCache{dir: "/p", began: time.Now().Add(time.Hour)}
	sig := fsx.Sig{Dev: 1, Ino: 2, Size: 3, Mtime: 4, Ctime: 5}
	huge := transcript.Rider{Agent: "a", Path: "/p/x/subagents/agent-a.jsonl", LastText: strings.Repeat("x", maxCachedString+1)}
	small := transcript.Rider{Agent: "b", Path: "/p/x/subagents/agent-b.jsonl", LastText: "ok"}
	c.keep(&huge, sig, -1, true, transcriptfile.RiderMeta{}, fsx.Sig{}, false)
	c.keep(&small, sig, -1, true, transcriptfile.RiderMeta{}, fsx.Sig{}, false)
	if len(c.fresh) != 1 || c.fresh[0].agent != "b" {
		t.Fatalf("kept %d readings (%+v), want agent b's alone", len(c.fresh), c.fresh)
	}
	b := string(appendRiderCache(nil, c.dir, c.fresh))
	if _, offs, ok := indexRiderCache(b, c.dir); !ok || len(offs) != 1 {
		t.Fatalf("the file of what was kept: %v, %d readings", ok, len(offs))
	}
}
