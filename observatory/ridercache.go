package observatory

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/transcript"
)

// The rider cache. A rider that may ride is read from its transcript
// (openat, fstat, pread, close) and, when the document lists it, from its
// meta file (four more); its stat, which the riding rule's window needs
// anyway, is one system call. So Build keeps, in a file of its own,
// <state>/riders-<12 hex of the projects directory's sha256>.cache, what
// it read of each rider (the facts the riding rule and the document take
// from the transcript, and the meta file's fields) beside the [fsx.Sig]
// of the stat made before the read. A later Build stats each rider as
// before and takes the kept reading of every transcript and meta file
// whose Sig is unchanged, judged again at its own now
// ([transcript.Rider.Judged]); any other is read. Only what was settled
// when it was read is kept ([fsx.Sig.Settled]: a change time at least
// [fsx.SigSettle] behind the kernel's clock then), so a write after it
// gives another Sig, also within one timestamp tick (what git's index
// trusts; the registry's row cache, station/rowcache.go, holds the same
// rule). The Sig is the stat's before the read, so a reading never
// stands for bytes older than its Sig: a file that changed between the
// two is read again next time, never served stale.
//
// Unlike the row cache, which only chooses rows to read, this cache's
// words are shown: a reading kept is the document's. It is trusted as the
// state directory is (a file there is ours when the directory is, and
// the file is a regular one of ours, checked on its read), and every hit
// is of a file that is still a regular one the user owns and others
// cannot write. It is consulted by a Build of the whole station (not one
// of Options.Only) on a projects directory whose Sigs hold
// ([fsx.Dir.SigsHold]), with a state directory that exists and is
// trusted; it is written (atomically, without fsync: it is advisory and
// may be deleted at any time) when this Build read a rider it can keep,
// or no longer saw one it held. Anything amiss with the file (missing,
// not regular, not trusted, too large, not this format, another projects
// directory's) is an empty cache.

const (
	riderCacheMagic = "oo-claude rider cache 1\n"
	// maxRiderCacheBytes bounds the cache file's read: well past 100,000
	// riders.
	maxRiderCacheBytes = 64 << 20
	// maxCachedString bounds each string a kept reading holds (a rider
	// with a longer one, a last text of megabytes, is not kept: it is
	// read each time).
	maxCachedString = 1 << 20
	// minCachedRider is the fewest bytes a kept reading takes (two Sigs,
	// rows, started, its zone and flags, seven empty strings), a bound on
	// the count before anything is made for it.
	minCachedRider = 2*fsx.SigBytes + 8 + 8 + 4 + 1 + 7*4
)

// cachedRider is one rider as a Build read it: its transcript's path
// under the projects directory and the Sig it was read under, what was
// read, and its meta file's Sig and fields (a zero metaSig: none kept).
type cachedRider struct {
	rel                string
	sig                fsx.Sig
	agent              string
	rows               int64
	started            time.Time
	final              bool
	lastStep, lastText string

	metaSig                       fsx.Sig
	agentType, description, model string
}

// rider is the kept reading as the Rider transcript.ReadRiderEntry read,
// path its transcript's path, not yet judged.
func (c *cachedRider) rider(path string) transcript.Rider {
	r := transcript.Rider{
		Agent: c.agent, Path: path, Bytes: c.sig.Size, Rows: c.rows, Started: c.started,
		LastStep: c.lastStep, LastText: c.lastText,
	}
	if c.final {
		r.StateReason = transcript.ReasonFinalText
	}
	return r
}

// riderCache is the cache one Build reads from and writes.
type riderCache struct {
	file  string    // the cache file
	dir   string    // the projects directory
	began time.Time // the kernel's clock before the first stat

	data string         // the file as read (its readings decoded where used)
	at   map[string]int // each reading's index, by its path under dir
	offs []int          // each reading's offset in data

	mu    sync.Mutex
	seen  []bool        // the readings this Build took, by index
	nseen int           // how many
	fresh []cachedRider // the readings this Build read from their files
}

// riderCacheFile is the cache file of the projects directory projects in
// the state directory state.
func riderCacheFile(state, projects string) string {
	sum := sha256.Sum256([]byte(projects))
	return filepath.Join(state, "riders-"+hex.EncodeToString(sum[:6])+".cache")
}

// openRiderCache returns the rider cache of the projects directory
// projects in the state directory state, for uid, or nil when it is not
// to be used: no state or projects directory, a state directory that is
// not trusted, a file system whose Sigs do not hold. began is the
// kernel's clock now. A cache file that cannot be read or parsed is an
// empty cache.
func openRiderCache(state, projects string, uid int, began time.Time) *riderCache {
	if state == "" || projects == "" || fsx.CheckDirTrust(state, uid) != nil {
		return nil
	}
	d, err := fsx.OpenDir(projects)
	if err != nil {
		return nil
	}
	hold := d.SigsHold()
	d.Close()
	if !hold {
		return nil
	}
	c := &riderCache{file: riderCacheFile(state, projects), dir: filepath.Clean(projects), began: began}
	if b, err := fsx.AppendFile(nil, c.file, maxRiderCacheBytes); err == nil && len(b) > 0 {
		// The file's bytes, never written again, as one string: every
		// field of a reading is a substring of it, made without a copy.
		data := unsafe.String(&b[0], len(b))
		if at, offs, ok := indexRiderCache(data, c.dir); ok {
			c.data, c.at, c.offs = data, at, offs
			c.seen = make([]bool, len(offs))
		}
	}
	return c
}

// rel is path under the cache's projects directory, or false.
func (c *riderCache) rel(path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, c.dir)
	if !ok || !strings.HasPrefix(rel, string(filepath.Separator)) {
		return "", false
	}
	return rel[1:], true
}

// lookup returns the kept reading of the rider transcript at path and
// its index, when there is one (else -1), and whether it was kept under
// sig: a reading kept under another Sig is of the transcript as it was,
// but its meta file's part may still hold.
func (c *riderCache) lookup(path string, sig fsx.Sig) (e cachedRider, i int, hit bool) {
	if c == nil || sig == (fsx.Sig{}) {
		return cachedRider{}, -1, false
	}
	rel, ok := c.rel(path)
	if !ok {
		return cachedRider{}, -1, false
	}
	i, ok = c.at[rel]
	if !ok {
		return cachedRider{}, -1, false
	}
	e, _, _ = decodeRider(c.data[c.offs[i]:])
	return e, i, e.sig == sig
}

// keep notes what this Build has of the rider r, whose transcript had
// the Sig sig, and of its meta file (m, of Sig msig, a zero one for none),
// to be written: the transcript's reading when it had settled, with its
// meta's when that had too. i is the index of the rider's reading in the
// file (-1: none); read says the transcript was read from its file, not
// taken from that reading, and metaRead the same of the meta file.
func (c *riderCache) keep(r *transcript.Rider, sig fsx.Sig, i int, read bool, m transcriptfile.RiderMeta, msig fsx.Sig, metaRead bool) {
	if c == nil || !sig.Settled(c.began) {
		return
	}
	metaKept := msig.Settled(c.began)
	c.mu.Lock()
	defer c.mu.Unlock()
	if i >= 0 && !c.seen[i] {
		c.seen[i] = true
		c.nseen++
	}
	if !read && !(metaRead && metaKept) {
		return // the reading the file holds
	}
	rel, ok := c.rel(r.Path)
	if !ok {
		return
	}
	if !r.Started.IsZero() && !time.Unix(0, r.Started.UnixNano()).Equal(r.Started) {
		return // a time the file cannot hold (before 1678, after 2262)
	}
	for _, v := range [...]string{r.Agent, r.LastStep, r.LastText, m.AgentType, m.Description, m.Model} {
		if len(v) > maxCachedString {
			return // read each time: the file would be refused whole
		}
	}
	e := cachedRider{
		rel: rel, sig: sig, agent: r.Agent, rows: r.Rows, started: r.Started,
		final: r.StateReason == transcript.ReasonFinalText, lastStep: r.LastStep, lastText: r.LastText,
	}
	if metaKept {
		e.metaSig, e.agentType, e.description, e.model = msig, m.AgentType, m.Description, m.Model
	}
	c.fresh = append(c.fresh, e)
}

// save writes what this Build kept, when it differs from what the file
// held: a reading read from its file, or one the file held that this
// Build did not take. A failure is no failure of the Build: the cache is
// advisory.
func (c *riderCache) save() {
	if c == nil || len(c.fresh) == 0 && c.nseen == len(c.offs) {
		return
	}
	all := c.fresh
	for i, ok := range c.seen {
		if ok {
			e, _, _ := decodeRider(c.data[c.offs[i]:])
			all = append(all, e)
		}
	}
	// A reading read from its file (first, so kept by the compaction)
	// stands for the one the file held.
	slices.SortStableFunc(all, func(a, b cachedRider) int { return cmp.Compare(a.rel, b.rel) })
	all = slices.CompactFunc(all, func(a, b cachedRider) bool { return a.rel == b.rel })
	_ = fsx.WriteAdvisoryAtomic(c.file, appendRiderCache(nil, c.dir, all))
}

// The cache file: riderCacheMagic; the projects directory (a 32-bit
// length, then its bytes); the count of readings (32 bits); for each its
// transcript's path under the projects directory, its Sig (device, inode,
// size, modification and change times: 64 bits each), its agent id, its
// rows (64 bits), its first row's time (Unix nanoseconds, 64 bits, and
// the zone's offset east of UTC in seconds, 32 bits), a flags byte (1:
// the last message is a final answer; 2: the first row's time is known),
// its last step and last text, then its meta file's Sig (zero: none
// kept), agent type, description and model. Strings are a 32-bit length
// and their bytes; numbers are little-endian.

// indexRiderCache checks a cache file of the projects directory dir and
// returns where each reading starts in b, and its index by path. Every
// reading must be whole and sound ([decodeRider]), each path once; one
// that is not fails the whole file.
func indexRiderCache(b, dir string) (map[string]int, []int, bool) {
	rest, ok := strings.CutPrefix(b, riderCacheMagic)
	if !ok {
		return nil, nil, false
	}
	d, rest, ok := cutString(rest)
	if !ok || d != dir || len(rest) < 4 {
		return nil, nil, false
	}
	count := int(le32(rest))
	rest = rest[4:]
	if count > len(rest)/minCachedRider {
		return nil, nil, false
	}
	at := make(map[string]int, count)
	offs := make([]int, count)
	for i := range offs {
		offs[i] = len(b) - len(rest)
		e, n, ok := decodeRider(rest)
		if _, dup := at[e.rel]; !ok || dup {
			return nil, nil, false
		}
		at[e.rel] = i
		rest = rest[n:]
	}
	return at, offs, rest == ""
}

// decodeRider decodes the reading at the start of b, returning it and its
// length: false when it is cut short or not sound (a string past
// maxCachedString, an unknown flag, a time beside the flag that says
// there is none, a path no rider transcript has under the projects
// directory, a zero Sig). Its strings are substrings of b.
func decodeRider(b string) (e cachedRider, n int, ok bool) {
	rest := b
	bad := false
	str := func() string {
		v, r, ok := cutString(rest)
		bad = bad || !ok
		rest = r
		return v
	}
	fixed := func(n int) string {
		if bad || len(rest) < n {
			bad = true
			return ""
		}
		v := rest[:n]
		rest = rest[n:]
		return v
	}
	sig := func() fsx.Sig {
		f := fixed(fsx.SigBytes)
		if bad {
			return fsx.Sig{}
		}
		return fsx.SigAt(f)
	}
	e.rel, e.sig, e.agent = str(), sig(), str()
	num := fixed(21)
	e.lastStep, e.lastText = str(), str()
	e.metaSig, e.agentType, e.description, e.model = sig(), str(), str(), str()
	if bad || num[20]&^3 != 0 || num[20]&2 == 0 && num[8:20] != zeroTime || !validRel(e.rel) || e.sig == (fsx.Sig{}) {
		return cachedRider{}, 0, false
	}
	e.rows = int64(le64(num))
	e.final = num[20]&1 != 0
	if num[20]&2 != 0 {
		e.started = zoned(time.Unix(0, int64(le64(num[8:]))), int(int32(le32(num[16:]))))
	}
	return e, len(b) - len(rest), true
}

// zeroTime is an unknown first row's time and zone, as written.
const zeroTime = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// cutString cuts a string (a 32-bit length, at most maxCachedString, and
// its bytes) from the start of b.
func cutString(b string) (v, rest string, ok bool) {
	if len(b) < 4 {
		return "", b, false
	}
	n := le32(b)
	if n > maxCachedString || int(n) > len(b)-4 {
		return "", b, false
	}
	return b[4 : 4+n], b[4+n:], true
}

func le32(b string) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b string) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

// validRel reports whether rel is a path a rider transcript can have
// under the projects directory: relative, clean, ending in agent-*.jsonl.
func validRel(rel string) bool {
	return rel != "" && !filepath.IsAbs(rel) && filepath.Clean(rel) == rel && !strings.HasPrefix(rel, "..") &&
		strings.HasPrefix(filepath.Base(rel), "agent-") && strings.HasSuffix(rel, transcriptfile.Ext)
}

// zoned is t in a zone offset seconds east of UTC (UTC itself at 0), as a
// transcript's timestamp parses: what the document prints of it is the
// same.
func zoned(t time.Time, offset int) time.Time {
	if offset == 0 {
		return t.UTC()
	}
	return t.In(time.FixedZone("", offset))
}

// appendRiderCache appends the cache file of the projects directory dir
// holding riders to buf.
func appendRiderCache(buf []byte, dir string, riders []cachedRider) []byte {
	str := func(s string) {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)))
		buf = append(buf, s...)
	}
	buf = append(buf, riderCacheMagic...)
	str(dir)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(riders)))
	for _, e := range riders {
		str(e.rel)
		buf = e.sig.Append(buf)
		str(e.agent)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.rows))
		var flags byte
		var ns int64
		var zone int
		if e.final {
			flags |= 1
		}
		if !e.started.IsZero() {
			flags |= 2
			ns = e.started.UnixNano()
			_, zone = e.started.Zone()
		}
		buf = binary.LittleEndian.AppendUint64(buf, uint64(ns))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(int32(zone)))
		buf = append(buf, flags)
		str(e.lastStep)
		str(e.lastText)
		buf = e.metaSig.Append(buf)
		str(e.agentType)
		str(e.description)
		str(e.model)
	}
	return buf
}
