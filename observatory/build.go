package observatory

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// Options are the inputs of [Build]. Station is required; every other field
// has a default.
type Options struct {
	// Station gives the registry, the process table (liveness) and, unless
	// Paths is set, the paths.
	Station *station.Station
	// Paths overrides Station.Paths when its SessionsDir is set.
	Paths station.Paths
	// Now is the clock; nil means the station's clock.
	Now func() time.Time
	// RidingWindow is the riding rule's window; <= 0 means ten minutes
	// (OO_CLAUDE_RIDING_WINDOW_S's default).
	RidingWindow time.Duration
	// IncludeFinished lists quiet/finished riders too; the counts
	// riders_riding and riders_total are the same either way.
	IncludeFinished bool
	// Hostname names the station (the document's station and each
	// session's; the CLI gives OO_CLAUDE_STATION or its default); nil
	// means os.Hostname.
	Hostname func() (string, error)
	// Generator is the document's generator, "oo-claude <version>" (the
	// CLI gives its own version); "" means "oo-claude".
	Generator string
	// Only restricts the document to one session id. When
	// no live session has that id, the document holds it as an offline
	// session (status offline, its riders from its transcript directory).
	// offline_inboxes and starts are then left empty.
	Only string
	// PID is the reader, named in the note of a start it finalizes as
	// lost (Document.Starts); 0 means this process.
	PID int

	// fileNow, when set, stands for time.Now in the rider cache's rule,
	// which is against the kernel's clock, never Now (a test hook:
	// ridercache_test.go).
	fileNow func() time.Time
}

// pathError is a failure to read a part of the station that the document
// cannot do without (the registry): an *fs.PathError whose Op names the
// package ("observatory read registry").
func pathError(op, path string, err error) error {
	return &fs.PathError{Op: "observatory " + op, Path: path, Err: err}
}

// errNoStation is claudeinbox.ErrNoStation, said by the observatory: the
// options lack a Station. It is a value of its own type, not made by
// fmt.Errorf: a package-level fmt.Errorf runs fmt (its printer's first use,
// tens of microseconds of page faults) at the start of every process that
// links the package, every send among them.
var errNoStation error = noStationError{}

type noStationError struct{}

func (noStationError) Error() string { return "observatory: " + claudeinbox.ErrNoStation.Error() }
func (noStationError) Unwrap() error { return claudeinbox.ErrNoStation }

// Build reads the station and returns the oo-claude/sessions/v0 document.
// Only an unreadable registry is an error; parts that cannot be read (a
// rider, an inbox, the lineage ledger) are left at their empty values and
// named in Document.Warnings. Options without a Station are an error
// matching claudeinbox.ErrNoStation. When ctx ends while Build reads, the
// sessions not read yet are left out and ctx's error is returned itself.
//
// A Build of the whole station (no Only) keeps what it read of each rider
// in a cache file in the station's state directory, when that directory
// exists, and a later Build reads again only the rider files whose stat
// changed since (docs/INTERNALS.md, "read, sessions, riders, lineage, gc,
// doctor, receipt"); the document is the same either way.
func Build(ctx context.Context, opts Options) (*Document, error) {
	if opts.Station == nil {
		return nil, errNoStation
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := *opts.Station
	if opts.Paths.SessionsDir != "" {
		st.Paths = opts.Paths
	}
	now := st.Clock()
	if opts.Now != nil {
		now = opts.Now
	}
	t := now()
	window := opts.RidingWindow
	if window <= 0 {
		window = transcriptfile.DefaultRidingWindow
	}
	host := ""
	hostname := opts.Hostname
	if hostname == nil {
		hostname = os.Hostname
	}
	if h, err := hostname(); err == nil {
		host = h
	}
	gen := opts.Generator
	if gen == "" {
		gen = "oo-claude"
	}
	doc := &Document{
		Schema:          Schema,
		GeneratedAt:     formatTime(t),
		Station:         host,
		Sessions:        []Session{},
		Generator:       gen,
		RidingWindowS:   window.Seconds(),
		IncludeFinished: opts.IncludeFinished,
		OfflineInboxes:  []OfflineInbox{},
		Starts:          []Start{},
		Warnings:        []string{},
	}

	live, err := st.Live()
	if err != nil {
		return nil, pathError("read registry", st.Paths.SessionsDir, err)
	}
	if opts.Only != "" {
		var keep []station.Session
		for _, s := range live {
			if s.SessionID == opts.Only {
				keep = append(keep, s)
			}
		}
		live = keep
	}

	b := builder{st: &st, now: t, window: window, all: opts.IncludeFinished, alive: map[int]bool{}, uid: st.UID()}
	if opts.Only == "" {
		fileNow := time.Now
		if opts.fileNow != nil {
			fileNow = opts.fileNow
		}
		b.cache = openRiderCache(st.Paths.StateDir, st.Paths.ProjectsDir, b.uid, fileNow())
	}
	for _, s := range live {
		// Live checked these processes a moment ago: a doorman's
		// heartbeat that names one is not checked again.
		b.alive[s.PID] = true
	}
	if opts.Only == "" {
		// One listing of the inbox directory for every session's inbox
		// and the offline ones: each file opened from its entry, the
		// absent ones never tried. Unlistable, each path is tried.
		b.inboxes, _ = inbox.List(st.Paths.InboxDir)
	}
	sessions := make([]Session, len(live))
	warns := make([][]string, len(live))
	workers := min(runtime.GOMAXPROCS(0), 8) // sessions read at once
	// Each worker takes the next session itself (no hand-off through a
	// channel: a wake-up less per session); each result has its own
	// slot, so the document's order is the registry's whatever the
	// workers' timing.
	var wg sync.WaitGroup
	var next atomic.Int64
	for range min(workers, len(live)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(live) {
					return
				}
				sessions[i], warns[i] = b.session(live[i])
			}
		}()
	}
	wg.Wait()
	if int(next.Load()) < len(live) { // a session left unread: ctx ended
		return nil, ctx.Err()
	}
	b.cache.save()
	for _, w := range warns {
		doc.Warnings = append(doc.Warnings, w...)
	}
	if opts.Only != "" && len(sessions) == 0 {
		s, w := b.offline(opts.Only)
		sessions = append(sessions, s)
		doc.Warnings = append(doc.Warnings, w...)
	}
	for i := range sessions {
		sessions[i].Station = doc.Station
	}
	doc.Sessions = sessions

	ledger := lineage.Ledger{Path: st.Paths.LineageFile()}
	links, err := ledger.Links(ctx)
	if err != nil {
		doc.Warnings = append(doc.Warnings, err.Error())
	}
	joinLineage(doc.Sessions, links)

	if opts.Only == "" {
		running := make(map[string]bool, len(live))
		for _, s := range live {
			running[s.SessionID] = true
		}
		off, w := b.offlineInboxes(running)
		doc.OfflineInboxes = off
		doc.Warnings = append(doc.Warnings, w...)
		starts, w := b.starts(opts.PID)
		doc.Starts = starts
		doc.Warnings = append(doc.Warnings, w...)
	}
	return doc, nil
}

type builder struct {
	st     *station.Station
	now    time.Time
	window time.Duration
	all    bool

	inboxes *inbox.Listing // the inbox directory's listing; nil: none
	cache   *riderCache    // nil: none
	uid     int            // whose rider files a cached reading may be of

	mu    sync.Mutex
	alive map[int]bool // pidAlive's answers within one Build
}

// inboxState is inbox.ReadState of session sid, from the listing when
// there is one.
func (b *builder) inboxState(sid string) (inboxv1.Inbox, error) {
	if b.inboxes != nil {
		return b.inboxes.ReadState(sid, b.now, b.pidAlive)
	}
	return inbox.ReadState(b.st.Paths.InboxDir, sid, b.now, b.pidAlive)
}

// pidAlive is the process table's answer for pid, asked once per Build.
func (b *builder) pidAlive(pid int) bool {
	b.mu.Lock()
	a, ok := b.alive[pid]
	b.mu.Unlock()
	if ok {
		return a
	}
	a = b.st.Proc.Alive(pid, "")
	b.mu.Lock()
	b.alive[pid] = a
	b.mu.Unlock()
	return a
}

func (b *builder) session(s station.Session) (Session, []string) {
	out := Session{
		Session:         s.SessionID,
		Name:            s.Name,
		PID:             s.PID,
		Status:          s.Status,
		CWD:             s.CWD,
		Version:         s.Version,
		StartedMS:       s.StartedAt,
		HostSession:     inboxv1.NullString(s.HostSessionID),
		Children:        []string{},
		Kind:            s.Kind,
		Entrypoint:      s.Entrypoint,
		StatusUpdatedMS: s.StatusUpdatedAt,
	}
	if s.StartedAt > 0 {
		out.Since = inboxv1.NullString(formatTime(time.UnixMilli(s.StartedAt)))
	}
	var warns []string
	out.Riders, out.RidersRiding, out.RidersTotal, warns = b.riders(b.sessionDir(s.SessionID, s.CWD))
	in, err := b.inboxState(s.SessionID)
	if err != nil {
		warns = append(warns, err.Error())
	}
	out.Inbox = in
	return out, warns
}

// offline is a session that does not run, shown by its full id.
func (b *builder) offline(sid string) (Session, []string) {
	out := Session{Session: sid, Status: StatusOffline, Children: []string{}}
	var warns []string
	dir := ""
	if p, err := transcript.Locate(b.st.Paths.ProjectsDir, sid, ""); err == nil {
		dir = strings.TrimSuffix(p, transcriptfile.Ext)
		if cwd, err := transcriptfile.RecordedCWD(p); err == nil {
			out.CWD = cwd
		}
	} else if !errors.Is(err, transcript.ErrNotFound) {
		warns = append(warns, err.Error())
	}
	if dir != "" {
		var w []string
		out.Riders, out.RidersRiding, out.RidersTotal, w = b.riders(dir)
		warns = append(warns, w...)
	} else {
		out.Riders = []transcript.Rider{}
	}
	in, err := b.inboxState(sid)
	if err != nil {
		warns = append(warns, err.Error())
	}
	out.Inbox = in
	return out, warns
}

// sessionDir is <projects>/<encoded cwd>/<sid>, where the session's riders
// live; when that directory does not exist (the cwd changed since the
// session started), the directory next to its transcript wherever it is.
func (b *builder) sessionDir(sid, cwd string) string {
	dir := filepath.Join(b.st.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid)
	if _, err := os.Lstat(dir); err == nil || cwd == "" {
		return dir
	}
	if p, err := transcript.Locate(b.st.Paths.ProjectsDir, sid, ""); err == nil {
		return strings.TrimSuffix(p, transcriptfile.Ext)
	}
	return dir
}

// offlineInboxes lists the inboxes in the inbox dir whose session does not
// run and that still hold pending lines, by session id.
func (b *builder) offlineInboxes(running map[string]bool) ([]OfflineInbox, []string) {
	out := []OfflineInbox{}
	var warns []string
	want := func(sid string) bool { return station.IsSessionID(sid) && !running[sid] }
	var ents []inbox.Entry
	var err error
	if b.inboxes != nil {
		ents, err = b.inboxes.Scan(want, b.now, b.pidAlive)
	} else {
		ents, err = inbox.ScanState(b.st.Paths.InboxDir, want, b.now, b.pidAlive)
	}
	if err != nil {
		warns = append(warns, err.Error())
	}
	for _, e := range ents {
		if e.Inbox.Pending == 0 {
			continue
		}
		in := e.Inbox
		out = append(out, OfflineInbox{
			Session: e.Session, Pending: in.Pending, Lines: in.Lines, LastLine: in.LastLine,
			Doorman: in.Doorman, Path: in.Path,
		})
	}
	return out, warns
}

// joinLineage fills parent_host, parent_session and children from the
// ledger's current links. A session is matched by its session id or its
// host id; a parent known by one id only gets the other from the running
// sessions.
func joinLineage(sessions []Session, links []lineage.Row) {
	bySID := map[string]int{}
	byHost := map[string]int{}
	for i, s := range sessions {
		bySID[s.Session] = i
		if s.HostSession != "" {
			byHost[string(s.HostSession)] = i
		}
	}
	find := func(sid, host *string) (int, bool) {
		if sid != nil {
			if i, ok := bySID[*sid]; ok {
				return i, true
			}
		}
		if host != nil {
			if i, ok := byHost[*host]; ok {
				return i, true
			}
		}
		return 0, false
	}
	for _, l := range links {
		child, isChild := find(&l.ChildSession, l.ChildHost)
		parent, hasParent := find(l.ParentSession, l.ParentHost)
		if isChild {
			s := &sessions[child]
			s.ParentSession, s.ParentHost = deref(l.ParentSession), deref(l.ParentHost)
			if hasParent {
				if s.ParentSession == "" {
					s.ParentSession = inboxv1.NullString(sessions[parent].Session)
				}
				if s.ParentHost == "" {
					s.ParentHost = sessions[parent].HostSession
				}
			}
		}
		if hasParent && !(isChild && child == parent) {
			sessions[parent].Children = append(sessions[parent].Children, l.ChildSession)
		}
	}
}

func deref(p *string) inboxv1.NullString {
	if p == nil {
		return ""
	}
	return inboxv1.NullString(*p)
}

// formatTime renders t as the contract's files do: ISO 8601, UTC, ms.
func formatTime(t time.Time) string { return jsonrow.FormatTime(t) }
