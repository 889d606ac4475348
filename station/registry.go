package station

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// Row is one registry file, <sessions>/<pid>.json, as Claude Code writes it.
// Unknown fields are tolerated and ignored.
type Row struct {
	PID                    int      `json:"pid"`
	SessionID              string   `json:"sessionId"`
	CWD                    string   `json:"cwd"`
	StartedAt              int64    `json:"startedAt"` // unix ms
	ProcStart              string   `json:"procStart"`
	Version                string   `json:"version,omitempty"`
	PeerProtocol           int      `json:"peerProtocol,omitempty"`
	PeerFeatures           []string `json:"peerFeatures,omitempty"`
	Kind                   string   `json:"kind,omitempty"`       // interactive, bg, daemon, daemon-worker
	Entrypoint             string   `json:"entrypoint,omitempty"` // sdk-cli for -p, claude-desktop, ...
	PidDomain              string   `json:"pidDomain,omitempty"`
	AsksForConvertedSkills any      `json:"asksForConvertedSkills,omitempty"`
	MessagingSocketPath    string   `json:"messagingSocketPath,omitempty"`
	Name                   string   `json:"name,omitempty"`
	NameSource             string   `json:"nameSource,omitempty"`
	NameSince              int64    `json:"nameSince,omitempty"`
	HostSessionID          string   `json:"hostSessionId,omitempty"` // local_…, desktop sessions only
	Status                 string   `json:"status,omitempty"`        // busy, idle, waiting
	WaitingFor             any      `json:"waitingFor,omitempty"`
	UpdatedAt              int64    `json:"updatedAt,omitempty"`
	StatusUpdatedAt        int64    `json:"statusUpdatedAt,omitempty"`
}

// Registry statuses as Claude Code writes them.
const (
	StatusBusy    = "busy"
	StatusIdle    = "idle"
	StatusWaiting = "waiting"
)

// Session is a registry row with what the station found out about it.
type Session struct {
	Row
	File string // the registry file
	// Live is true when the pid runs with the row's procStart.
	Live bool
}

// Station is a view of one machine: its paths, its process table and a clock.
type Station struct {
	Paths Paths
	Proc  Proc
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// EUID is the uid whose files and directories the trust checks accept
	// (owner of an inbox, a heartbeat, a registry row); nil means
	// os.Geteuid. Every package that checks ownership asks [Station.UID].
	EUID func() int

	// decoded, when set, is told of each registry row decoded and checked
	// for liveness (a test hook: see export_test.go).
	decoded func(path string)
	// rowRead, when set, is told of each registry row that the row cache's
	// reader reads from its file (a test hook: see rowcache_test.go).
	rowRead func(name string)
	// fileNow, when set, stands for time.Now in the row cache's rule,
	// which is against the kernel's clock, never the station's Now (a
	// test hook: see rowcache_test.go).
	fileNow func() time.Time
}

// New returns a Station reading the given paths and the real /proc.
func New(p Paths) *Station { return &Station{Paths: p} }

// Clock returns the station's clock, time.Now when none was given.
func (s *Station) Clock() func() time.Time {
	if s.Now != nil {
		return s.Now
	}
	return time.Now
}

// fileClock is the clock the row cache holds file change times to.
func (s *Station) fileClock() func() time.Time {
	if s.fileNow != nil {
		return s.fileNow
	}
	return time.Now
}

// UID returns the uid the station's trust checks demand: EUID's, else
// os.Geteuid().
func (s *Station) UID() int {
	if s != nil && s.EUID != nil {
		return s.EUID()
	}
	return os.Geteuid()
}

// IsSessionID reports whether s has the shape of a session id: a UUID in
// its canonical 36-character form (either case). Session ids become file
// names, so nothing else is accepted as one. Every oo-claude package checks
// ids and msg_ids with this one function.
func IsSessionID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// errBadRow reports a registry file that cannot be used.
var errBadRow = errors.New("unusable registry row")

// maxRowBytes bounds the read of one registry file. Claude Code's rows are
// well under a kilobyte; a larger file is not a row and is never read whole.
const maxRowBytes = 64 << 10

// ReadRow reads and checks one registry file.
func ReadRow(path string) (Row, error) {
	b, err := readRowFile(path, nil)
	if err != nil {
		return Row{}, err
	}
	return parseRow(path, b)
}

// readRowFile appends the content of the registry file at path to buf
// through fsx's checks (no symlink, regular and trusted, never blocking),
// refused when it exceeds maxRowBytes.
func readRowFile(path string, buf []byte) ([]byte, error) {
	return rowBytes(path, buf, func() ([]byte, error) { return fsx.AppendFile(buf, path, maxRowBytes) })
}

// rowBytes is the read of one registry file (by read), its size bound
// said as the registry's.
func rowBytes(path string, buf []byte, read func() ([]byte, error)) ([]byte, error) {
	b, err := read()
	if errors.Is(err, fsx.ErrTooLarge) {
		return b, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: larger than %d bytes", errBadRow, maxRowBytes)}
	}
	return b, err
}

// parseRow decodes and checks the content of one registry file.
func parseRow(path string, b []byte) (Row, error) {
	r, err := decodeRow(b)
	if err != nil {
		return Row{}, &fs.PathError{Op: "parse", Path: path, Err: fmt.Errorf("%w: %v", errBadRow, err)}
	}
	if r.PID <= 0 || !IsSessionID(r.SessionID) {
		return Row{}, &fs.PathError{Op: "parse", Path: path, Err: fmt.Errorf("%w: pid %d, sessionId %q", errBadRow, r.PID, r.SessionID)}
	}
	return r, nil
}

// rawRow is the undecoded content of one registry file.
type rawRow struct {
	stem string // the pid the file is named by: <stem>.json
	b    []byte
	// With the row cache (rowcache.go): the Sig b was read under, and
	// whether the cache keeps the row. A cached row has no b: what the
	// cache keeps of it (whether it decoded, its name and session id)
	// stands for it until it is decoded, when it is read.
	sig          fsx.Sig
	keep, cached bool
	ok           bool
	name, sid    string
}

// path is the registry file's path in the registry dir (built when a row
// is decoded, not for every row listed).
func (r rawRow) path(dir string) string { return filepath.Join(dir, r.stem+".json") }

// rawRows reads the content of every registry file, <pid>.json, into one
// buffer, decoding none of them. Files that are not rows (keys, temporary
// files) and files that cannot be read are skipped. The directory is
// opened once and each row read relative to it (fsx.Dir): a name is looked
// for in every row, so what a row costs is what a send by name at many
// rows pays for each. With cached, from cacheFrom rows on, a row whose
// file is unchanged since the row cache took it is stat'd, not read
// (rowcache.go); such a row is marked cached.
func (s *Station) rawRows(cached bool) ([]rawRow, error) {
	d, err := fsx.OpenDir(s.Paths.SessionsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer d.Close()
	if cached {
		if cachePath, c := s.openRowCache(d); c != nil {
			return s.cachedRows(d, cachePath, c)
		}
	}
	ents, err := d.Entries()
	if err != nil {
		return nil, err
	}
	// The listing's entry type stands for the lstat before the open.
	ents = slices.DeleteFunc(ents, func(e fs.DirEntry) bool { return !isRowName(e.Name()) })
	return shareRows(len(ents), func(lo, hi int, out []rawRow) []rawRow { return s.readRows(d, ents[lo:hi], out) }), nil
}

// isRowName reports whether name is a registry row's: <pid>.json.
func isRowName(name string) bool {
	stem, ok := strings.CutSuffix(name, ".json")
	return ok && isPIDText(stem)
}

// shareRows returns the rows of a listing of n, read by read(lo, hi, out)
// (which appends the rows of the listing's lo to hi to out, its room),
// shared among goroutines, one a P, past rowsAlone rows: the system calls
// of a row's read run side by side. Each reads a run of the listing into
// its own part of one slice, so the rows keep the listing's order and are
// made once.
func shareRows(n int, read func(lo, hi int, out []rawRow) []rawRow) []rawRow {
	rows := make([]rawRow, n)
	parts := min(runtime.GOMAXPROCS(0), (n+rowsAlone-1)/rowsAlone)
	if parts <= 1 {
		return read(0, n, rows[:0])
	}
	runs := make([][]rawRow, parts)
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := i*n/parts, (i+1)*n/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A full slice expression: a run cannot grow into the next.
			runs[i] = read(lo, hi, rows[lo:lo:hi])
		}()
	}
	wg.Wait()
	k := 0
	for _, r := range runs {
		k += copy(rows[k:], r) // forward, within rows: k never passes a run's start
	}
	return rows[:k]
}

// rowsAlone is how many registry rows one goroutine reads before rawRows
// shares the reads with another.
const rowsAlone = 64

// rowChunk is the size of the buffers cachedRows reads rows into: some
// eighty rows as Claude Code writes them.
const rowChunk = 64 << 10

// readRows appends to out the registry files ents of d (each
// <pid>.json), skipping any that cannot be read or is larger than a row.
func (s *Station) readRows(d *fsx.Dir, ents []fs.DirEntry, out []rawRow) []rawRow {
	var (
		buf = make([]byte, 0, 1024*len(ents))
		err error
	)
	for _, e := range ents {
		start := len(buf)
		if buf, err = d.AppendEntry(buf, e, maxRowBytes); err != nil {
			continue
		}
		// Full slice expressions: a later read that grows buf must not
		// write into this row's bytes, and appending to one never reaches
		// the next.
		stem := strings.TrimSuffix(e.Name(), ".json")
		out = append(out, rawRow{stem: stem, b: buf[start:len(buf):len(buf)]})
	}
	return out
}

// cachedRows is rawRows through the row cache. The directory is listed
// unless the cache holds its listing under the Sig it still has; each row
// is stat'd (the check before an open, too), and a row the cache holds
// under the Sig its file still has comes from the cache, without its
// bytes; any other is read, keeping its Sig. The cache is written back
// when it can keep more than it held. Below cacheFrom rows every row is
// read, and a cache that holds rows is emptied.
func (s *Station) cachedRows(d *fsx.Dir, cachePath string, c *rowCache) ([]rawRow, error) {
	began := s.fileClock()()
	dirSig, err := d.Sig()
	if err != nil {
		return nil, err
	}
	// listing is the Sig the cache is to keep the listing under: the
	// cache's own when its listing stands, the directory's when it was
	// listed and had settled, else none.
	var (
		names   []string
		listing fsx.Sig
	)
	if c.dir != (fsx.Sig{}) && c.dir == dirSig {
		names, listing = c.names(), c.dir
	} else {
		if names, err = d.Names(); err != nil {
			return nil, err
		}
		names = slices.DeleteFunc(names, func(n string) bool { return !isRowName(n) })
		if dirSig.Settled(began) {
			listing = dirSig
		}
	}
	if len(names) < cacheFrom {
		if len(c.rows) > 0 {
			// The registry shrank below cacheFrom: the rows kept are of
			// no more use, and each resolve would read and parse them.
			// An empty cache takes their place (swapped in as any is).
			_ = fsx.WriteAdvisoryAtomic(cachePath, appendRowCache(nil, s.Paths.SessionsDir, fsx.Sig{}, nil))
		}
		cachePath, c = "", &rowCache{} // holds nothing: every row is read
	} else {
		c.align(names)
	}
	rows := shareRows(len(names), func(lo, hi int, out []rawRow) []rawRow {
		// The rows read go into chunks of at most rowChunk bytes, a new
		// one when a row may not fit: however many rows are read, their
		// bytes are made once, never copied into a grown buffer.
		var buf []byte
		for i := lo; i < hi; i++ {
			name := names[i]
			sig, err := d.StatEntry(name, maxRowBytes)
			if err != nil {
				continue
			}
			stem := name[:len(name)-len(".json")]
			if cr, ok := c.lookup(i, name); ok && cr.sig == sig {
				out = append(out, rawRow{stem: stem, sig: sig, keep: true, cached: true,
					ok: cr.ok, name: cr.name, sid: cr.sid})
				continue
			}
			if s.rowRead != nil {
				s.rowRead(name)
			}
			if cap(buf)-len(buf) < int(sig.Size)+1 {
				// Room for the part's rows left, 1 KiB each, up to a chunk.
				buf = make([]byte, 0, max(min(rowChunk, 1024*(hi-i)), int(sig.Size)+1))
			}
			start := len(buf)
			if buf, sig, err = d.AppendNameSig(buf, name, maxRowBytes); err != nil {
				continue
			}
			r := rawRow{stem: stem, b: buf[start:len(buf):len(buf)], sig: sig}
			r.keep = int64(len(r.b)) == sig.Size && sig.Settled(began)
			out = append(out, r)
		}
		return out
	})
	if cachePath != "" {
		saveRowCache(cachePath, s.Paths.SessionsDir, c, listing, names, rows)
	}
	return rows, nil
}

// isPIDText reports whether s is a pid as the registry names its files: a
// decimal number without sign or leading zeros that fits an int.
func isPIDText(s string) bool {
	if s == "" || len(s) > 10 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(s)
	return err == nil && n > 0
}

// session decodes a raw row into a Session, liveness included. A row whose
// pid is not the number its file is named by is not a row.
func (s *Station) session(raw rawRow) (Session, bool) {
	if s.decoded != nil {
		s.decoded(raw.path(s.Paths.SessionsDir))
	}
	path := raw.path(s.Paths.SessionsDir)
	if raw.cached {
		// The row cache chose this row; its file decides what it says.
		if s.rowRead != nil {
			s.rowRead(raw.stem + ".json")
		}
		b, err := readRowFile(path, nil)
		if err != nil {
			return Session{}, false
		}
		raw.b = b
	}
	r, err := parseRow(path, raw.b)
	if err != nil || strconv.Itoa(r.PID) != raw.stem {
		return Session{}, false
	}
	return Session{Row: r, File: path, Live: s.Proc.Alive(r.PID, r.ProcStart)}, true
}

// sortSessions orders sessions by start time, oldest first, then by pid.
func sortSessions(ss []Session) {
	sort.SliceStable(ss, func(i, j int) bool {
		if ss[i].StartedAt != ss[j].StartedAt {
			return ss[i].StartedAt < ss[j].StartedAt
		}
		return ss[i].PID < ss[j].PID
	})
}

// sessions reads every registry row, live or not, ordered by start time
// (oldest first). Files that are not rows (keys, temporary files), rows
// that cannot be parsed and rows whose pid is not their file's name are
// skipped: a row being rewritten must not fail a listing.
func (s *Station) sessions() ([]Session, error) {
	raws, err := s.rawRows(false)
	if err != nil {
		return nil, err
	}
	var out []Session
	for _, raw := range raws {
		if x, ok := s.session(raw); ok {
			out = append(out, x)
		}
	}
	sortSessions(out)
	return out, nil
}

// Live returns the live sessions: rows whose pid runs with their procStart.
// When two live rows name the same session id, the newer one is kept.
func (s *Station) Live() ([]Session, error) {
	all, err := s.sessions()
	if err != nil {
		return nil, err
	}
	return liveOf(all), nil
}

// liveOf keeps the live sessions of all (sorted oldest first), the newest
// row of each session id in the place of its oldest.
func liveOf(all []Session) []Session {
	seen := map[string]int{}
	var out []Session
	for _, x := range all {
		if !x.Live {
			continue
		}
		if i, ok := seen[x.SessionID]; ok {
			out[i] = x // sorted oldest first: the later row wins
			continue
		}
		seen[x.SessionID] = len(out)
		out = append(out, x)
	}
	return out
}

// rowMatch is what liveWhere picks rows by: raw must hold for the bytes
// of every row that a caller's rule could match, fields for the name and
// session id of every such row, decoded (each a pre-filter: it may let
// through rows that do not match, never drop one that does). A row from
// the row cache is judged by fields, any other by raw.
type rowMatch struct {
	raw    func(b []byte) bool
	fields func(name, sid string) bool
}

// liveWhere returns what [Station.Live] returns, restricted to the rows
// m picks: it decodes and checks the liveness of those rows alone (and of
// the rows that name the same session id as a live one of them, so that
// the newest of a session id still wins), never of the others. What m
// lets through is read (when it came from the row cache), decoded and
// judged in full, so it cannot forge a match.
func (s *Station) liveWhere(m rowMatch) ([]Session, error) {
	raws, err := s.rawRows(true)
	if err != nil {
		return nil, err
	}
	var (
		picked = make([]bool, len(raws))
		out    []Session
		ids    []string
	)
	for i, raw := range raws {
		if raw.cached && !(raw.ok && m.fields(raw.name, raw.sid)) || !raw.cached && !m.raw(raw.b) {
			continue
		}
		picked[i] = true
		if x, ok := s.session(raw); ok && x.Live {
			out = append(out, x)
			ids = append(ids, x.SessionID)
		}
	}
	// Rows of the same session ids: a newer live one replaces a candidate.
	// Past a few ids, decoding the other rows is cheaper than looking for
	// every id in each.
	if len(ids) > 0 {
		idb := make([][]byte, len(ids))
		for i, id := range ids {
			idb[i] = []byte(id)
		}
		for i, raw := range raws {
			switch {
			case picked[i]:
				continue
			case raw.cached:
				if !raw.ok || !slices.Contains(ids, raw.sid) {
					continue
				}
			case len(ids) <= maxIDScan && !mayName(raw.b, idb):
				continue
			}
			if x, ok := s.session(raw); ok && x.Live && slices.Contains(ids, x.SessionID) {
				out = append(out, x)
			}
		}
	}
	sortSessions(out)
	return liveOf(out), nil
}

// maxIDScan is how many session ids liveWhere looks for in a row's bytes
// before it decodes the row instead.
const maxIDScan = 4

// plainJSON reports whether every string in the JSON text b decodes to its
// own bytes: no escape sequence (no backslash at all) and valid UTF-8
// (encoding/json turns each invalid byte into U+FFFD). Only then can a
// decoded string be looked for in b as it is.
func plainJSON(b []byte) bool {
	return bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b)
}

// mayName reports whether the raw row b may name one of ids exactly.
func mayName(b []byte, ids [][]byte) bool {
	if !plainJSON(b) {
		return true
	}
	for _, id := range ids {
		if bytes.Contains(b, id) {
			return true
		}
	}
	return false
}

// foldSearch looks for a string (lower, which holds no upper case ASCII
// letter) in bytes whose ASCII letters are read in lower case.
type foldSearch struct {
	lower string
	// anchor is lower's longest run of bytes that are no ASCII letter,
	// at off in lower: it stands in b as it is wherever lower stands in
	// some case, so a search for it (bytes.Index, which is fast) finds
	// every place lower can start.
	anchor string
	off    int
}

// newFoldSearch returns the search for lower.
func newFoldSearch(lower string) foldSearch {
	f := foldSearch{lower: lower}
	for i := 0; i < len(lower); {
		if isASCIILetter(lower[i]) {
			i++
			continue
		}
		j := i
		for j < len(lower) && !isASCIILetter(lower[j]) {
			j++
		}
		if j-i > len(f.anchor) {
			f.anchor, f.off = lower[i:j], i
		}
		i = j
	}
	return f
}

// in reports whether b contains f's string in any case of its ASCII letters.
func (f foldSearch) in(b []byte) bool {
	n := len(f.lower)
	if n == 0 {
		return true
	}
	if f.anchor == "" {
		return containsFoldASCII(b, f.lower)
	}
	for from := 0; ; {
		i := bytes.Index(b[from:], []byte(f.anchor))
		if i < 0 {
			return false
		}
		at := from + i - f.off
		if at >= 0 && at+n <= len(b) && equalFoldASCII(b[at:at+n], f.lower) {
			return true
		}
		from += i + 1
	}
}

// equalFoldASCII reports whether b, its ASCII letters read in lower case,
// is lower.
func equalFoldASCII(b []byte, lower string) bool {
	for i := range len(lower) {
		if toLowerASCII(b[i]) != lower[i] {
			return false
		}
	}
	return true
}

// containsFoldASCII reports whether b contains lower (which holds no upper
// case ASCII letter) when b's ASCII letters are read in lower case.
func containsFoldASCII(b []byte, lower string) bool {
	n := len(lower)
	if n == 0 {
		return true
	}
	first := lower[0]
	for i := 0; i+n <= len(b); i++ {
		if toLowerASCII(b[i]) == first && equalFoldASCII(b[i:i+n], lower) {
			return true
		}
	}
	return false
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func toLowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// LiveByPID returns the live row of pid, if any.
func (s *Station) LiveByPID(pid int) (Session, bool) {
	path := filepath.Join(s.Paths.SessionsDir, strconv.Itoa(pid)+".json")
	if s.decoded != nil {
		s.decoded(path)
	}
	r, err := ReadRow(path)
	if err != nil || r.PID != pid || !s.Proc.Alive(r.PID, r.ProcStart) {
		return Session{}, false
	}
	return Session{Row: r, File: path, Live: true}, true
}

// CallingSession returns the session the process pid runs inside: the
// nearest ancestor of pid (not pid itself) with a live registry row,
// else envSessionID (the process's CLAUDE_CODE_SESSION_ID) when it is a
// session id. foundBy is "ancestor" or "env"; sid is "" when there is
// none. A pid of 0 or below skips the ancestor walk.
func (s *Station) CallingSession(pid int, envSessionID string) (sid, host, foundBy string) {
	if pid > 0 && s != nil {
		if chain, err := s.Proc.Ancestors(pid); err == nil {
			for _, a := range chain {
				if x, ok := s.LiveByPID(a.PID); ok {
					return x.SessionID, x.HostSessionID, "ancestor"
				}
			}
		}
	}
	if IsSessionID(envSessionID) {
		return envSessionID, "", "env"
	}
	return "", "", ""
}

// LiveBySessionID returns the live row that names id, if any.
func (s *Station) LiveBySessionID(id string) (Session, bool, error) {
	live, err := s.Live()
	if err != nil {
		return Session{}, false, err
	}
	for _, x := range live {
		if x.SessionID == id {
			return x, true, nil
		}
	}
	return Session{}, false, nil
}

// KeyFile returns the path of a session's key file:
// <sessions>/<pid>.<sha256 hex of the socket path>.key.
func (s *Station) KeyFile(r Row) string {
	sum := sha256.Sum256([]byte(r.MessagingSocketPath))
	return filepath.Join(s.Paths.SessionsDir, strconv.Itoa(r.PID)+"."+hex.EncodeToString(sum[:])+".key")
}

// errNoToken reports a session whose key file holds no usable token.
var errNoToken = errors.New("no messaging token")

// PeerToken reads the session's messaging token from its key file. The key
// must name the row's procStart, so a stale key of a recycled pid is not
// used. Errors never carry the token.
func (s *Station) PeerToken(r Row) (Token, error) {
	path := s.KeyFile(r)
	b, err := fsx.ReadFile(path)
	if err != nil {
		return "", err
	}
	var k struct {
		PeerToken string `json:"peerToken"`
		ProcStart string `json:"procStart"`
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return "", &fs.PathError{Op: "parse", Path: path, Err: errNoToken}
	}
	if k.PeerToken == "" || (k.ProcStart != "" && r.ProcStart != "" && k.ProcStart != r.ProcStart) {
		return "", &fs.PathError{Op: "read", Path: path, Err: errNoToken}
	}
	return Token(k.PeerToken), nil
}
