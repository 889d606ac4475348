// Package lineage keeps the lineage ledger v0: the append-only file
// <observatory dir>/lineage.jsonl in which a Claude Code session's parent is
// recorded (by the child itself, by the parent that started it, or by the
// dispatcher that spawned it).
//
// It guarantees:
//
//   - Rows carry exactly the ledger's keys (ts, child_host, child_session,
//     parent_host, parent_session, title, by: COMPATIBILITY.md, "The
//     lineage ledger v0"); unknown ids are written as null, never as "".
//   - [Ledger.Register] is idempotent on (child, parent) against the child's
//     newest link: registering the parent the child already names appends
//     nothing, registering an earlier parent again appends again, so the
//     newest line always names the latest parent.
//   - Missing ids are filled from the live registry (a session id from a
//     local_… host id and the other way round) before the row is compared or
//     written.
//   - Appends are one O_APPEND write of a whole line (0600, dir 0700), and a
//     Register holds <ledger>.lock while it reads and appends, so two
//     concurrent registrations of the same link append it once.
//   - Reading is lenient: lines that are not rows are skipped, and the newest
//     line per child wins ([Ledger.Links], [Ledger.Parent]).
package lineage

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/station"
)

// By says who wrote a link.
type By string

// Writers of a link, as the ledger names them.
const (
	ByChild      By = "child"      // the child registered its own parent
	ByParent     By = "parent"     // the parent registered a child it started
	ByDispatcher By = "dispatcher" // oo-dispatch registered what it spawned
)

// Valid reports whether b is one of the three writers.
func (b By) Valid() bool { return b == ByChild || b == ByParent || b == ByDispatcher }

// Row is one line of the ledger. Optional ids are pointers so that an
// unknown id is written as JSON null, as the ledger has it.
type Row struct {
	TS            string  `json:"ts"`
	ChildHost     *string `json:"child_host"`
	ChildSession  string  `json:"child_session"`
	ParentHost    *string `json:"parent_host"`
	ParentSession *string `json:"parent_session"`
	Title         string  `json:"title"`
	By            By      `json:"by"`
}

// Link is what a caller asks to register. Each parent or child id may be
// given as a session id (a UUID) or a desktop host id (local_…); the other
// one is filled from the live registry when the session runs.
type Link struct {
	Child      string // the child's session id (UUID), or "" when ChildHost names it
	ChildHost  string // the child's local_… host id, optional
	Parent     string // the parent: a session id (UUID) or a local_… host id
	ParentHost string // the parent's local_… host id, when Parent is a UUID and it is known
	Title      string
	By         By // default ByChild
}

// Sentinel errors callers branch on; they arrive wrapped in an
// *fs.PathError (Op "lineage register" or "lineage read").
var (
	ErrNoChild   = errors.New("no child session id")
	ErrNoParent  = errors.New("no parent id")
	ErrBadID     = errors.New("not a session id (UUID) or host id (local_…)")
	ErrBadBy     = errors.New("by must be child, parent or dispatcher")
	ErrSelfChild = errors.New("a session cannot be its own parent")
	ErrBadTitle  = errors.New("title holds a control character or is longer than 200 characters")
)

// pathError is a failed ledger operation: an *fs.PathError whose Op
// names the package ("lineage register", "lineage read") and whose Path
// is the ledger.
func pathError(op, path string, err error) error {
	return &fs.PathError{Op: "lineage " + op, Path: path, Err: err}
}

// isHostID reports whether s has the shape of a desktop host session id
// (local_ followed by 8–72 lowercase hex digits or dashes, the shape Claude
// Code accepts for hostSessionId). It is matched by hand: a regular
// expression would link package regexp, whose tables every start of
// oo-claude builds (0.2 ms of its start; BENCHMARKS.md).
func isHostID(s string) bool {
	rest, ok := strings.CutPrefix(s, "local_")
	if !ok || len(rest) < 8 || len(rest) > 72 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}

// Sessions answers which live session a session id or host id names. A
// *station.Station satisfies it.
type Sessions interface {
	Live() ([]station.Session, error)
}

// Ledger is the lineage ledger at Path. The zero Ledger, with no Path,
// registers nothing (an error) and reads no rows.
type Ledger struct {
	Path string // <observatory dir>/lineage.jsonl (station.Paths.LineageFile); required
	// Sessions fills missing ids from the live registry; nil fills nothing.
	Sessions Sessions
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LockWait bounds the wait for <ledger>.lock; 0 means five seconds.
	LockWait time.Duration
}

// defaultLockWait is how long Register waits for the ledger's lock before
// it gives up, naming the holder ([ErrLockHeld]).
const defaultLockWait = 5 * time.Second

// errNoPath is Register's error for a Ledger without a Path.
var errNoPath = errors.New("the ledger has no path")

// ErrLockHeld reports a ledger lock held longer than the wait (a stopped
// `lineage register`, say); the error names the holder's pid when /proc
// can tell.
var ErrLockHeld = errors.New("the ledger's lock is held")

func (l *Ledger) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Result is what Register did.
type Result struct {
	Row Row
	// Appended is false when the child's newest link already named this
	// parent (Row is then that existing link).
	Appended bool
}

// maxTitle is the longest title kept, in characters.
const maxTitle = 200

// Register records that link.Child descends from link.Parent, unless the
// child's newest link already says so.
func (l *Ledger) Register(ctx context.Context, link Link) (Result, error) {
	fail := func(err error) (Result, error) { return Result{}, pathError("register", l.Path, err) }
	if l.Path == "" {
		return fail(errNoPath) // never a lock or a line beside whatever "" resolves to
	}
	row, err := l.resolve(link)
	if err != nil {
		return fail(err)
	}
	wait := l.LockWait
	if wait <= 0 {
		wait = defaultLockWait
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	lock, err := fsx.LockContext(lctx, l.Path+".lock")
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			holder := "an unknown process"
			if pid := fsx.Holder(l.Path + ".lock"); pid > 0 {
				holder = fmt.Sprintf("pid %d", pid)
			}
			return fail(fmt.Errorf("%w by %s for more than %s (%s.lock)", ErrLockHeld, holder, wait, l.Path))
		}
		return fail(err)
	}
	defer lock.Unlock()
	var cur Row
	var found bool
	err = l.scan(ctx, func(r Row) {
		if r.ChildSession == row.ChildSession {
			cur, found = r, true
		}
	})
	if err != nil {
		return fail(err)
	}
	if found && sameParent(cur, row) {
		return Result{Row: cur}, nil
	}
	row.TS = l.now().UTC().Format("2006-01-02T15:04:05.000Z")
	b, err := json.Marshal(row)
	if err != nil {
		return fail(err)
	}
	if _, err := fsx.AppendLine(l.Path, b); err != nil {
		return fail(err)
	}
	return Result{Row: row, Appended: true}, nil
}

// resolve checks link and fills ids from the live registry.
func (l *Ledger) resolve(link Link) (Row, error) {
	if link.By == "" {
		link.By = ByChild
	}
	if !link.By.Valid() {
		return Row{}, fmt.Errorf("%w: %q", ErrBadBy, link.By)
	}
	title := strings.TrimSpace(link.Title)
	if len([]rune(title)) > maxTitle || strings.ContainsFunc(title, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Row{}, ErrBadTitle
	}
	var live []station.Session
	if l.Sessions != nil {
		live, _ = l.Sessions.Live() // an unreadable registry fills nothing
	}
	lookup := func(sid, host string) (string, string) {
		for _, s := range live {
			if (sid != "" && s.SessionID == sid) || (host != "" && s.HostSessionID == host) {
				if sid == "" {
					sid = s.SessionID
				}
				if host == "" {
					host = s.HostSessionID
				}
				break
			}
		}
		return sid, host
	}
	// The child.
	if link.Child != "" && !station.IsSessionID(link.Child) {
		return Row{}, fmt.Errorf("child %q: %w", link.Child, ErrBadID)
	}
	if link.ChildHost != "" && !isHostID(link.ChildHost) {
		return Row{}, fmt.Errorf("child host %q: %w", link.ChildHost, ErrBadID)
	}
	if link.Child == "" && link.ChildHost == "" {
		return Row{}, ErrNoChild
	}
	csid, chost := lookup(link.Child, link.ChildHost)
	if csid == "" {
		return Row{}, fmt.Errorf("%w: host %s names no live session", ErrNoChild, link.ChildHost)
	}
	// The parent.
	var psid, phost string
	switch {
	case link.Parent == "":
		return Row{}, ErrNoParent
	case station.IsSessionID(link.Parent):
		psid = link.Parent
	case isHostID(link.Parent):
		phost = link.Parent
	default:
		return Row{}, fmt.Errorf("parent %q: %w", link.Parent, ErrBadID)
	}
	if link.ParentHost != "" {
		if !isHostID(link.ParentHost) {
			return Row{}, fmt.Errorf("parent host %q: %w", link.ParentHost, ErrBadID)
		}
		phost = link.ParentHost
	}
	psid, phost = lookup(psid, phost)
	if strings.EqualFold(psid, csid) || (phost != "" && strings.EqualFold(phost, chost)) {
		return Row{}, ErrSelfChild
	}
	return Row{
		ChildHost: opt(chost), ChildSession: csid,
		ParentHost: opt(phost), ParentSession: opt(psid),
		Title: title, By: link.By,
	}, nil
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// sameParent reports whether two rows name the same parent: the same
// session id, or — when one of them lacks it — the same host id.
func sameParent(a, b Row) bool {
	if a.ParentSession != nil && b.ParentSession != nil {
		return *a.ParentSession == *b.ParentSession
	}
	return a.ParentHost != nil && b.ParentHost != nil && *a.ParentHost == *b.ParentHost
}

// Rows returns every row of the ledger, oldest first. A missing ledger has
// no rows; lines that are not rows are skipped. A read stops when ctx
// ends (the error wraps ctx.Err()).
func (l *Ledger) Rows(ctx context.Context) ([]Row, error) {
	var out []Row
	if err := l.scan(ctx, func(r Row) { out = append(out, r) }); err != nil {
		return nil, pathError("read", l.Path, err)
	}
	return out, nil
}

// maxRowBytes is the longest ledger line read; a longer one is skipped.
const maxRowBytes = 64 << 10

// scan streams the ledger's rows to fn, oldest first, holding one line
// (at most maxRowBytes) in memory at a time, until ctx ends (nil: never).
// A missing ledger has no rows.
func (l *Ledger) scan(ctx context.Context, fn func(Row)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f, err := fsx.OpenRead(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	long := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk, isPrefix, err := br.ReadLine()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !long && len(line)+len(chunk) <= maxRowBytes {
			line = append(line, chunk...)
		} else {
			long = true
		}
		if isPrefix {
			continue
		}
		if !long {
			if r, ok := parseRow(line); ok {
				fn(r)
			}
		}
		line, long = line[:0], false
	}
}

// parseRow parses one ledger line leniently: a line that is not a JSON row
// whose child is a session id (and whose parent ids, when set, are a
// session id and a host id) is not a row: a torn last line, garbage, a row
// some other writer made up.
func parseRow(line []byte) (Row, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return Row{}, false
	}
	var r Row
	if json.Unmarshal(line, &r) != nil || !station.IsSessionID(r.ChildSession) {
		return Row{}, false
	}
	if (r.ParentSession != nil && !station.IsSessionID(*r.ParentSession)) ||
		(r.ParentHost != nil && !isHostID(*r.ParentHost)) || (r.ChildHost != nil && !isHostID(*r.ChildHost)) ||
		(r.ParentSession == nil && r.ParentHost == nil) {
		return Row{}, false
	}
	return r, true
}

// Links returns the current link of every child (its newest line), ordered
// by that line's position in the ledger. The ledger is streamed: memory
// grows with the number of children, not with the ledger's size. A read
// stops when ctx ends (the error wraps ctx.Err()).
func (l *Ledger) Links(ctx context.Context) ([]Row, error) {
	type at struct {
		i int
		r Row
	}
	last := map[string]at{}
	i := 0
	err := l.scan(ctx, func(r Row) {
		last[r.ChildSession] = at{i, r}
		i++
	})
	if err != nil {
		return nil, pathError("read", l.Path, err)
	}
	list := make([]at, 0, len(last))
	for _, a := range last {
		list = append(list, a)
	}
	sort.Slice(list, func(a, b int) bool { return list[a].i < list[b].i })
	out := make([]Row, len(list))
	for k, a := range list {
		out[k] = a.r
	}
	return out, nil
}

// Parent returns the child's current link. A read stops when ctx ends (the
// error wraps ctx.Err()).
func (l *Ledger) Parent(ctx context.Context, child string) (Row, bool, error) {
	var cur Row
	var ok bool
	err := l.scan(ctx, func(r Row) {
		if r.ChildSession == child {
			cur, ok = r, true
		}
	})
	if err != nil {
		return Row{}, false, pathError("read", l.Path, err)
	}
	return cur, ok, nil
}
