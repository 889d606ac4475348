package station

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// The row cache. A target is looked for in every registry row, and a row
// read is four system calls (openat, fstat, read, close); a stat is one.
// So a reader of many rows keeps, in a file of its own,
// <state>/registry-<12 hex of the sessions directory's sha256>.cache,
// what a target is matched against in each row (its name and session id,
// decoded), beside the row file's [fsx.Sig] as the fstat before its read
// gave it; and the listing of the directory beside the directory's Sig.
// A later reader lists the directory only when its Sig changed, stats
// each row, and takes the kept fields of every row whose Sig is
// unchanged. Only what was settled when it was read is kept
// ([fsx.Sig.Settled]: a row, or the directory, whose change time was at
// least [fsx.SigSettle] behind the clock then). A write after that read
// sets a change time the kernel's clock has moved past, so an unchanged
// Sig is the same bytes (git's index trusts its stats the same way, and
// distrusts what changed within its own tick).
//
// The cache only chooses: every row it lets through to be decoded is read
// again from its file first ([Station.liveWhere]), so a cache can leave a
// row out (which the Sigs prevent) but never put words in one. It is
// consulted from cacheFrom rows, on a file system whose stats can vouch
// for content ([fsx.Dir.SigsHold]), when the state directory exists and
// is trusted; it is written (atomically, without fsync: it is advisory)
// only when it can keep more than it holds. Anything amiss with the file
// (missing, not regular, not trusted, too large, not this format, another
// directory's) is an empty cache.

const (
	// cacheFrom is how many registry rows make liveWhere consult the
	// cache: below it, reading the rows costs less than the cache's read.
	cacheFrom = 32
	// maxCacheBytes bounds the cache file's read: well past 10,000 rows.
	maxCacheBytes = 32 << 20
	cacheMagic    = "oo-claude registry cache 1\n"
)

// cachedRow is what the cache keeps of a registry row: its file name
// (<pid>.json), the Sig it was read under (zero: listed, nothing kept),
// and whether it decoded, with its name and session id.
type cachedRow struct {
	file      string
	sig       fsx.Sig
	ok        bool
	name, sid string
}

// rowCache is the cache's rows, in the order of the listing they were
// written from: a listing of the same files in the same order (the usual
// case: a directory lists its files in the same order until they change)
// finds each row at its own index; another is looked up by file name.
type rowCache struct {
	dir    fsx.Sig // the directory's, when the listing was kept; else zero
	rows   []cachedRow
	byName map[string]int // nil until align finds the orders differ
}

// names is the listing the cache was written from.
func (c *rowCache) names() []string {
	out := make([]string, len(c.rows))
	for i, r := range c.rows {
		out[i] = r.file
	}
	return out
}

// align prepares c for lookups of the listing names.
func (c *rowCache) align(names []string) {
	if len(names) == len(c.rows) {
		same := true
		for i, n := range names {
			if c.rows[i].file != n {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	c.byName = make(map[string]int, len(c.rows))
	for i, r := range c.rows {
		c.byName[r.file] = i
	}
}

// lookup returns the cached row of file name, the listing's i'th, after
// align.
func (c *rowCache) lookup(i int, name string) (cachedRow, bool) {
	if c.byName == nil {
		if i < len(c.rows) && c.rows[i].file == name {
			return c.rows[i], true
		}
		return cachedRow{}, false
	}
	j, ok := c.byName[name]
	if !ok {
		return cachedRow{}, false
	}
	return c.rows[j], true
}

// rowCacheFile is the cache file of s's registry, "" when s has no
// state directory.
func (s *Station) rowCacheFile() string {
	if s.Paths.StateDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s.Paths.SessionsDir))
	return filepath.Join(s.Paths.StateDir, "registry-"+hex.EncodeToString(sum[:6])+".cache")
}

// openRowCache returns the cache of the registry d lists, or nil when the
// cache is not to be used: no state directory, one that is not trusted, a
// file system whose Sigs do not hold. A cache file that cannot be read or
// parsed is an empty cache.
func (s *Station) openRowCache(d *fsx.Dir) (path string, c *rowCache) {
	path = s.rowCacheFile()
	if path == "" || fsx.CheckDirTrust(s.Paths.StateDir, s.UID()) != nil || !d.SigsHold() {
		return "", nil
	}
	b, err := fsx.AppendFile(nil, path, maxCacheBytes)
	if err != nil || len(b) == 0 {
		return path, &rowCache{}
	}
	// The file's bytes, never written again, as one string: every field
	// is a substring of it, made without a copy (of the whole file: 56 of
	// the 301 KiB a send by name allocated at 500 rows).
	c, ok := parseRowCache(unsafe.String(&b[0], len(b)), s.Paths.SessionsDir)
	if !ok {
		return path, &rowCache{}
	}
	return path, c
}

// The cache file: cacheMagic; the registry directory (a 32-bit length,
// then its bytes) and its Sig (device, inode, size, modification and
// change times: 64 bits each); the count of rows (32 bits); for each row
// its file name (length, bytes), its Sig, a byte that is 1 when the row
// decoded, then its name and its session id (length, bytes each).
// Numbers are little-endian.

// parseRowCache decodes a cache file of the registry dir. Every row must
// be whole and sound (a row file's name; a name and id each within
// maxRowBytes); one that is not fails the whole file. The rows' strings
// are substrings of b.
func parseRowCache(b string, dir string) (*rowCache, bool) {
	b, ok := strings.CutPrefix(b, cacheMagic)
	if !ok {
		return nil, false
	}
	take := func(n int) (string, bool) {
		if n < 0 || n > len(b) {
			return "", false
		}
		v := b[:n]
		b = b[n:]
		return v, true
	}
	u32 := func(v string) uint32 { return uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24 }
	field := func(max int) (string, bool) {
		v, ok := take(4)
		if !ok {
			return "", false
		}
		n := u32(v)
		if n > uint32(max) {
			return "", false
		}
		return take(int(n))
	}
	sig := func() (fsx.Sig, bool) {
		f, ok := take(fsx.SigBytes)
		if !ok {
			return fsx.Sig{}, false
		}
		return fsx.SigAt(f), true
	}
	d, ok := field(len(b))
	if !ok || d != dir {
		return nil, false
	}
	c := &rowCache{}
	if c.dir, ok = sig(); !ok {
		return nil, false
	}
	n, ok := take(4)
	if !ok {
		return nil, false
	}
	// Each row takes at least 59 bytes: a bound on the count before
	// anything is made for it.
	count := u32(n)
	if count > uint32(len(b)/59) {
		return nil, false
	}
	c.rows = make([]cachedRow, count)
	for i := range c.rows {
		r := &c.rows[i]
		if r.file, ok = field(32); !ok || !isRowName(r.file) {
			return nil, false
		}
		if r.sig, ok = sig(); !ok {
			return nil, false
		}
		flag, ok := take(1)
		if !ok || flag[0] > 1 {
			return nil, false
		}
		r.ok = flag[0] == 1
		if r.name, ok = field(maxRowBytes); !ok {
			return nil, false
		}
		if r.sid, ok = field(maxRowBytes); !ok {
			return nil, false
		}
	}
	return c, len(b) == 0
}

// appendRowCache appends the cache file of the registry dir (its Sig
// dirSig, zero when its listing is not kept) holding rows to buf.
func appendRowCache(buf []byte, dir string, dirSig fsx.Sig, rows []cachedRow) []byte {
	str := func(s string) {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)))
		buf = append(buf, s...)
	}
	buf = append(buf, cacheMagic...)
	str(dir)
	buf = dirSig.Append(buf)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(rows)))
	for _, r := range rows {
		str(r.file)
		buf = r.sig.Append(buf)
		if r.ok {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
		str(r.name)
		str(r.sid)
	}
	return buf
}

// saveRowCache writes the cache of a listing (names, whose directory's
// Sig is listing: zero when the listing is not to be kept) and of the rows
// read from it to path, when it keeps more than c, the cache it was read
// through: another listing, or a row read from its file that can be kept
// (the rows that came from c are kept again; rows no longer listed drop
// out). A failure is no failure of the read: the cache is advisory.
func saveRowCache(path, dir string, c *rowCache, listing fsx.Sig, names []string, rows []rawRow) {
	grew := listing != c.dir
	for _, r := range rows {
		grew = grew || r.keep && !r.cached
	}
	if !grew {
		return
	}
	kept := make(map[string]*rawRow, len(rows))
	for i := range rows {
		if rows[i].keep {
			kept[rows[i].stem] = &rows[i]
		}
	}
	entries := make([]cachedRow, len(names))
	for i, n := range names {
		e := cachedRow{file: n}
		if r := kept[n[:len(n)-len(".json")]]; r != nil {
			e.sig = r.sig
			if r.cached {
				e.ok, e.name, e.sid = r.ok, r.name, r.sid
			} else if row, err := decodeRow(r.b); err == nil {
				e.ok, e.name, e.sid = true, row.Name, row.SessionID
			}
		}
		entries[i] = e
	}
	_ = fsx.WriteAdvisoryAtomic(path, appendRowCache(nil, dir, listing, entries))
}
