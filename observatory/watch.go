package observatory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fsnotify/fsnotify"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
	"golang.org/x/sys/unix"
)

// EventKind names what an [Event] says happened; its JSON is the string.
type EventKind string

// The events of the station's stream ([Watch]); Event.Event holds one.
const (
	EventSessionStarted EventKind = "session-started" // a live registry row appeared (name, pid, status)
	EventSessionEnded   EventKind = "session-ended"   // its row went away, or its process is gone
	EventStatus         EventKind = "status"          // the registry status changed (status: busy, idle, waiting)
	EventDoorman        EventKind = "doorman"         // the doorman's state changed (doorman: up, stopped, not-fresh)
	EventLineQueued     EventKind = "line-queued"     // a line was appended to the session's inbox (line, line_offset)
	EventLineDelivered  EventKind = "line-delivered"  // the doorman acked a line (msg_id, class, line_offset; class refused when it refused it)
	EventLineSeen       EventKind = "line-seen"       // the transcript shows the row with the line's msg_id
	EventTurnEnded      EventKind = "turn-ended"      // a main-chain final answer (text: its first 200 characters)
	EventRiderStarted   EventKind = "rider-started"   // a sub-agent transcript appeared (agent, description)
	EventRiderFinished  EventKind = "rider-finished"  // a sub-agent gave its final answer or its meta says finished
	EventCost           EventKind = "cost"            // what the session's transcript tells of its cost changed (cost)
	EventWarning        EventKind = "warning"         // something could not be read (text); the stream goes on
	EventOverflow       EventKind = "overflow"        // the reader fell behind: dropped events were left out; Initial events of the station as it is follow
)

// defaultLiveness is how often Watch checks that the sessions it holds
// without a pidfd still have their process when WatchOptions.Liveness is
// 0: the doorman's default heartbeat period.
const defaultLiveness = 2 * time.Second

// defaultMaxQueued is how many events wait for a reader that does not
// take them when WatchOptions.MaxQueued is 0.
const defaultMaxQueued = 10000

// Doorman states of a doorman event.
const (
	DoormanUp       = "up"
	DoormanStopped  = "stopped"
	DoormanNotFresh = "not-fresh"
)

// textLimit is how many characters of a line or a final answer an event
// carries.
const textLimit = 200

// maxWatchRow bounds the bytes a watch holds for one transcript row: a
// peer line's row (its line at most 16 KiB) and a final answer (of which
// an event carries 200 characters) fit many times over; a longer row is
// reported once with a warning and skipped, never held whole.
const maxWatchRow = transcriptfile.TailBytes

// readChunk is the most of an inbox a watch reads at a time: its memory
// for an inbox whatever the file's size (one buffer, made at the first
// read). It holds many lines of the contract's 16 KiB cap, and passes over
// an over-long one in few reads (a 2 GiB sparse inbox in 64 KiB reads took
// 20 s on a loaded machine, in 1 MiB reads 1 s).
const readChunk = 1 << 20

// Event is one thing that happened on the station. Event, TS and Session are
// always set; the other fields only for the events that name them (see the
// Event constants), and are left out of the JSON otherwise.
type Event struct {
	Event   EventKind `json:"event"`
	TS      string    `json:"ts"`      // when the watcher saw it (ISO 8601, UTC, ms)
	Session string    `json:"session"` // the session id
	// Initial marks the events Watch emits at its start for what it finds
	// (a session already running, its doorman's state).
	Initial bool `json:"initial,omitempty"`

	Name   string `json:"name,omitempty"`
	PID    int    `json:"pid,omitempty"`
	Status string `json:"status,omitempty"`

	Doorman string `json:"doorman,omitempty"`
	// Reason says why a doorman is not fresh: the string of a
	// claudeinbox Reason of a not-fresh doorman (missing, unreadable,
	// stale, state, pid-gone, other-session).
	Reason string `json:"reason,omitempty"`

	Line       string `json:"line,omitempty"`
	LineOffset *int64 `json:"line_offset,omitempty"`
	MsgID      string `json:"msg_id,omitempty"`
	Class      string `json:"class,omitempty"`
	Text       string `json:"text,omitempty"`

	Agent       string `json:"agent,omitempty"`
	Description string `json:"description,omitempty"`

	// Dropped is how many events an overflow event stands for.
	Dropped int `json:"dropped,omitempty"`

	// Cost is what a cost event says of the session's cost.
	Cost *Cost `json:"cost,omitempty"`

	// Station names the station the event comes from; Watch leaves it
	// empty, the CLI and a merged watch of many stations set it.
	Station string `json:"station,omitempty"`
}

// Cost is what a session's transcript tells of its cost: Claude Code's
// own figure as of the session's last process exit, and the tokens of its
// requests since. It is never an estimate: the transcript holds no price,
// only the cost-state row a claude process writes when it exits.
type Cost struct {
	// USD is the totalCostUSD of the transcript's last cost-state row:
	// the session's cost over its processes up to the last one that
	// exited (a resumed process's row counts the earlier processes',
	// riders included). Nil when no cost-state row was found.
	USD *float64 `json:"usd"`
	// UnknownModelCost is that row's hasUnknownModelCost: a model the
	// session used had no price, so USD leaves its requests out.
	UnknownModelCost bool `json:"unknown_model_cost,omitempty"`
	// Tokens is the tokens (input, cache and output) of the session's own
	// model requests after that row, all of them when there is none (its
	// riders' requests are counted in the next row's USD only).
	Tokens int64 `json:"tokens"`
	// Bounded says that the look back from the transcript's end, when the
	// watch took the session, stopped at its bound (CostLookBack bytes)
	// before it found a cost-state row: USD may lie further back, and
	// Tokens counts only the requests within the bound (at least).
	Bounded bool `json:"bounded,omitempty"`
}

// CostLookBack is how far back from a transcript's end [Watch] looks for
// the session's last cost-state row when it takes a session: 4 MiB
// (tens of turns of Claude Code 2.1.332, whose rows of a turn weigh some
// 100 KiB), whatever the transcript's size.
const CostLookBack = 4 << 20

// WatchOptions are the inputs of [Watch]. Station is required.
type WatchOptions struct {
	// Station gives the registry, the process table and, unless Paths is
	// set, the paths.
	Station *station.Station
	// Paths overrides Station.Paths when its SessionsDir is set.
	Paths station.Paths
	// Only restricts the stream to one session id.
	Only string
	// Now is the clock of the events' ts; nil means the station's clock.
	Now func() time.Time
	// MaxQueued bounds the events that wait for the reader; 0 means
	// 10,000. See [Watch] for what happens past it.
	MaxQueued int
	// Liveness is how often the watcher checks, while it holds a live
	// session whose exit it cannot wait for (no pidfd), that its process is
	// still there; 0 means two seconds, below 0 never (and no pidfds
	// either).
	Liveness time.Duration
}

// Watch streams the station's events until ctx ends, then closes the
// channel. It first emits, marked Initial, a session-started and a doorman
// event for every session running now; from then on one event per change.
//
// Within one session the events come in the order their facts happened,
// which is not always the order the files show them:
//
//   - line-delivered comes before the line's line-seen. The doorman writes
//     the line into the session (the delivery), the session's transcript
//     then shows its row (line-seen), and only then the doorman writes the
//     ack that says so (line-delivered): on an idle session the turn may
//     even end before the ack. So a line-seen whose ack the watcher has not
//     read, while a line this watch saw queued waits for its ack and the
//     doorman is up, is held, and the session's later events behind it,
//     until the ack is read (then line-delivered, line-seen, the rest), at
//     most two seconds.
//   - A turn's rider events come before its turn-ended. Claude Code writes
//     its transcripts in batches, so a final answer can land before the
//     rows of a rider started in that turn: the watcher reads the riders
//     first, and holds the turn-ended until each rider started since the
//     last turn-ended has finished, at most 300 ms (three of Claude Code's
//     100 ms write batches). A rider run in the background outlives its
//     turn: its turn-ended comes after those 300 ms, its rider-finished
//     later, before the turn-ended of the turn that reads its result.
//
// Across sessions events come in the order the watcher learns of them.
//
// A cost event tells what the session's own transcript says of its cost
// (see [Cost]): soon after the watch takes a session whose transcript
// tells any (read back from its end, at most CostLookBack bytes, never the
// whole file, by one goroutine of the watch's, one session at a time, so
// neither the start nor the other events wait for it), then each time a
// read of its appended rows moves it: a cost-state row (a claude process
// of the session exited) or a model request answered (its assistant
// message). It carries Claude Code's own dollar figure, never one worked
// out from tokens. It is not Initial, but in an overflow's station as it
// is.
//
// The watch is event-driven: one inotify instance on the registry
// directory, the inbox directory, the projects directory and, for each live
// session, its project directory, its session directory and its
// subagents directory. Each event re-reads only what changed: the one
// registry row, the bytes appended to an inbox or an ack file since the last
// look, the one heartbeat, the rows appended to a transcript (through a
// transcript.Follower that never waits: the watcher is its waker). Process
// exits are events too: each live session's process and each up doorman's
// are waited on through a pidfd (Linux 5.3 and later), so an idle station
// wakes the watcher for nothing but the timer that turns a fresh doorman
// heartbeat stale, armed while a doorman is up (its heartbeats are file
// events anyway), and, while an event is held, that event's bound.
//
// A session whose process dies without removing its row (SIGKILL) is seen
// as ended at once, from its pidfd. Where pidfds cannot be had (another
// OS, an older kernel, a seccomp filter, a Station whose process table is
// not this machine's /proc) such a session is seen as ended when anything
// of it changes next (its doorman's stopped heartbeat, usually at once),
// or at the next liveness check (every Liveness, one process-table lookup
// a session without a pidfd), whichever is first. When the kernel drops
// events (a full inotify queue) the watcher emits a warning and reads
// every file it follows again (the registry, the inboxes and their acks
// and heartbeats, each live session's transcript and riders), each from
// where it had read to: what changed meanwhile comes as events, what was
// told already is not told again.
//
// Events are queued in memory until the reader takes them, so a reader
// that falls behind delays nothing (the watcher reads each change as it
// happens), up to MaxQueued events. Past that the watcher keeps following
// the station but drops events, counting them, so a reader that stops
// costs bounded memory. Once the reader has taken every queued event it
// gets one overflow event (Dropped: how many were left out), then, marked
// Initial, a session-started and a doorman event for every session running
// then and a rider-started for each of its riders still riding: the
// station as it is, as at the start of a watch. A session the reader knew
// and that is not among them ended meanwhile. Setup errors (no station,
// matching claudeinbox.ErrNoStation; the registry unreadable; no inotify)
// are returned at once.
func Watch(ctx context.Context, opts WatchOptions) (<-chan Event, error) {
	if opts.Station == nil {
		return nil, errNoStation
	}
	st := *opts.Station
	if opts.Paths.SessionsDir != "" {
		st.Paths = opts.Paths
	}
	now := st.Clock()
	if opts.Now != nil {
		now = opts.Now
	}
	dw, err := fsx.NewDirWatch()
	if err != nil {
		return nil, pathError("watch", st.Paths.SessionsDir, err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel() // a done context: a Follower's Next reads what is there, never waits
	max := opts.MaxQueued
	if max <= 0 {
		max = defaultMaxQueued
	}
	liveness := opts.Liveness
	if liveness == 0 {
		liveness = defaultLiveness
	}
	wctx, stop := context.WithCancel(ctx)
	w := &watcher{
		st: &st, now: now, only: opts.Only, dw: dw, maxQueued: max, liveness: liveness,
		out:       make(chan Event),
		ctx:       wctx,
		stop:      stop,
		exits:     make(chan exitNote),
		done:      done,
		byPID:     map[int]*wsession{},
		bySID:     map[string]*wsession{},
		inboxes:   map[string]*winbox{},
		projects:  map[string][]*wsession{},
		sessDirs:  map[string]*wsession{},
		riderDirs: map[string]*wsession{},
		tops:      map[string]bool{},
		lookWake:  make(chan struct{}, 1),
		looked:    make(chan costLook),
		lookDone:  make(chan struct{}),
	}
	for _, d := range []string{st.Paths.SessionsDir, st.Paths.InboxDir, st.Paths.ProjectsDir} {
		if err := w.addTop(d); err != nil {
			dw.Close()
			stop()
			return nil, pathError("watch", d, err)
		}
	}
	var initial []Event
	w.emitTo = func(e Event) { e.Initial = true; initial = append(initial, e) }
	go w.lookBacks()
	w.scanInboxes()
	if err := w.scanRegistry(); err != nil {
		dw.Close()
		stop()
		<-w.lookDone
		return nil, pathError("read registry", st.Paths.SessionsDir, err)
	}
	go w.run(initial)
	return w.out, nil
}

type watcher struct {
	st   *station.Station
	now  func() time.Time
	only string
	dw   *fsx.DirWatch
	out  chan Event
	ctx  context.Context // ends with the watch
	stop context.CancelFunc
	// exits are the process exits the watcher waits for (pidfds).
	exits chan exitNote

	emitTo    func(Event) // where events go; during setup the initial list
	done      context.Context
	maxQueued int           // events that wait for the reader, at most
	liveness  time.Duration // how often the held sessions' processes are checked; <0 never

	byPID     map[int]*wsession
	bySID     map[string]*wsession
	inboxes   map[string]*winbox
	projects  map[string][]*wsession // project dir → its sessions
	sessDirs  map[string]*wsession   // <project>/<sid> → its session
	riderDirs map[string]*wsession   // <project>/<sid>/subagents → its session
	tops      map[string]bool        // the top directories watched themselves

	stale *time.Timer // the next heartbeat expiry, while a doorman is up
	live  *time.Timer // the next liveness check, while a session without a pidfd is held
	hold  *time.Timer // the next held event's bound, while one is held

	buf []byte // the inbox read buffer, readChunk bytes once used

	// The sessions' cost look backs: queued by the loop, run one at a
	// time by lookBacks, their results back on looked.
	lookMu   sync.Mutex
	looks    []costLook
	lookWake chan struct{} // one pending wake-up
	looked   chan costLook
	lookDone chan struct{} // closed when lookBacks returned
}

// wsession is one live session the watcher follows.
type wsession struct {
	row       station.Row
	projDir   string
	tpath     string
	follower  *transcript.Follower
	riders    map[string]*wrider
	doorman   string
	reason    string    // why the doorman is not fresh, as its doorman event said
	staleAt   time.Time // when the heartbeat goes stale, while up
	ridersDir string

	exit       *fsx.ProcExit // the session's process exit, when pidfds work
	polled     bool          // no pidfd: the liveness poll checks it
	doormanPID int           // the up doorman whose exit is waited for
	doormanEx  *fsx.ProcExit

	// The session's events held back so the stream reads in the order
	// the facts happened (see Watch): held[0] waits for its fact.
	held      []heldEvent
	acked     map[string]bool // msg_ids whose ack the watcher read
	turnRider map[string]bool // riders started since the last turn-ended

	cost      Cost                      // what the transcript tells of the cost, as read so far
	costKnown bool                      // cost tells anything: a cost-state row, a request or a bound hit
	tally     transcriptfile.TokenTally // the requests since the last cost-state row the follower read
	// While the look back runs (costLooking), cost holds what the
	// follower read since where it began, and firstMsg and firstTokens
	// its first request's, which the look back may have counted too.
	costLooking bool
	firstMsg    string
	firstTokens int64
}

// costLook is one session's look back for its cost, run by the watch's
// look-back goroutine (a 4 MiB read back is too long for the loop);
// done is its result.
type costLook struct {
	s       *wsession
	path    string
	from    int64
	c       Cost
	known   bool
	lastMsg string
}

// heldEvent is an event held back until what precedes it is known, at
// most holdFor.
type heldEvent struct {
	e     Event
	until time.Time
}

// exitNote is a process exit the watcher waited for: the session's own
// process, or its doorman's.
type exitNote struct {
	s       *wsession
	doorman bool
	pid     int
}

type wrider struct {
	started, finished bool
	follower          *transcript.Follower
	meta              transcriptfile.RiderMeta // as last read (on its own file's events)
	hasMeta           bool
}

// winbox is where the watcher has read an inbox and its ack file to.
type winbox struct {
	inboxOff, ackOff int64
	// skipping: inboxOff is inside a line longer than the contract's cap,
	// reported once; the bytes up to its "\n" are passed over unheld.
	skipping bool
	// unacked counts the lines this watch saw queued and no ack for.
	unacked int
}

func (w *watcher) run(initial []Event) {
	defer close(w.out)
	defer func() { <-w.lookDone }()
	defer w.dw.Close()
	defer w.closeAll()
	defer w.stop()
	// Events wait in a queue while the reader is busy, so the watcher
	// reads each file change at once (what it reads is the state of that
	// moment) however slow the reader is; past maxQueued they are counted
	// and dropped until the reader has emptied the queue, which then gets
	// the overflow event and the station as it is.
	queue := initial
	dropped := 0
	w.emitTo = func(e Event) {
		if dropped > 0 || len(queue) >= w.maxQueued {
			dropped++
			return
		}
		queue = append(queue, e)
	}
	for {
		var staleC, liveC, holdC <-chan time.Time
		if w.stale != nil {
			staleC = w.stale.C
		}
		w.armLive()
		if w.live != nil {
			liveC = w.live.C
		}
		if w.hold != nil {
			holdC = w.hold.C
		}
		var out chan<- Event
		var head Event
		if len(queue) > 0 {
			out, head = w.out, queue[0]
		}
		select {
		case <-w.ctx.Done():
			return
		case out <- head:
			queue[0] = Event{}
			queue = queue[1:]
			if len(queue) == 0 && dropped > 0 {
				queue = w.snapshot()
				queue[0].Dropped, dropped = dropped, 0
			}
		case ev, ok := <-w.dw.Events():
			if !ok {
				return
			}
			w.handle(ev)
		case x := <-w.exits:
			w.exited(x)
		case l := <-w.looked:
			w.costLooked(l)
		case <-holdC:
			w.hold = nil
			for _, pid := range slices.Sorted(maps.Keys(w.byPID)) {
				w.release(w.byPID[pid], false)
			}
			w.armHold()
		case err, ok := <-w.dw.Errors():
			if !ok {
				return
			}
			w.emit(Event{Event: EventWarning, Text: "watch: " + err.Error() + "; reading every followed file again"})
			w.recheck()
		case <-liveC:
			w.live = nil
			for _, pid := range slices.Sorted(maps.Keys(w.byPID)) {
				if s := w.byPID[pid]; s.polled && !w.st.Proc.Alive(s.row.PID, s.row.ProcStart) {
					w.end(s)
				}
			}
		case <-staleC:
			w.stale = nil
			for _, s := range w.byPID {
				if s.doorman == DoormanUp {
					w.checkDoorman(s.row.SessionID)
				}
			}
			w.armStale()
		}
	}
}

// snapshot is the overflow event (its Dropped left for the caller) and the
// station as the watcher holds it: a session-started and a doorman event
// per live session and a rider-started per rider still riding, all Initial.
func (w *watcher) snapshot() []Event {
	ts := formatTime(w.now())
	out := []Event{{Event: EventOverflow, TS: ts, Text: "the reader fell behind: events were dropped; the station as it is follows"}}
	pids := make([]int, 0, len(w.byPID))
	for pid := range w.byPID {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		s := w.byPID[pid]
		r := s.row
		out = append(out,
			Event{Event: EventSessionStarted, TS: ts, Session: r.SessionID, Initial: true, Name: r.Name, PID: r.PID, Status: r.Status},
			Event{Event: EventDoorman, TS: ts, Session: r.SessionID, Initial: true, Doorman: s.doorman, Reason: s.reason})
		if s.costKnown && !s.costLooking {
			out = append(out, Event{Event: EventCost, TS: ts, Session: r.SessionID, Initial: true, Cost: s.costCopy()})
		}
		for _, id := range slices.Sorted(maps.Keys(s.riders)) {
			if rd := s.riders[id]; rd.started && !rd.finished {
				out = append(out, Event{Event: EventRiderStarted, TS: ts, Session: r.SessionID, Initial: true, Agent: id, Description: rd.meta.Description})
			}
		}
	}
	return out
}

// armLive starts the liveness timer when a session without a pidfd is
// held and none runs, and stops it when none is held.
func (w *watcher) armLive() {
	polled := false
	for _, s := range w.byPID {
		if s.polled {
			polled = true
			break
		}
	}
	switch {
	case w.liveness < 0:
	case !polled && w.live != nil:
		w.live.Stop()
		w.live = nil
	case polled && w.live == nil:
		w.live = time.NewTimer(w.liveness)
	}
}

func (w *watcher) closeAll() {
	if w.live != nil {
		w.live.Stop()
	}
	if w.hold != nil {
		w.hold.Stop()
	}
	for _, s := range w.byPID {
		s.close()
	}
}

func (s *wsession) close() {
	s.exit.Close()
	s.doormanEx.Close()
	if s.follower != nil {
		s.follower.Close()
	}
	for _, r := range s.riders {
		if r.follower != nil {
			r.follower.Close()
		}
	}
}

func (w *watcher) emit(e Event) {
	if e.TS == "" {
		e.TS = formatTime(w.now())
	}
	w.emitTo(e)
}

func (w *watcher) add(dir string) error { return w.dw.Add(dir) }

func (w *watcher) remove(dir string) { w.dw.Remove(dir) }

// addTop watches one of the station's top directories, or, while it does
// not exist (a station where Claude Code never ran yet), its nearest
// existing ancestor, until it appears.
func (w *watcher) addTop(dir string) error {
	ok, err := w.dw.AddOrAncestor(dir)
	w.tops[dir] = ok
	return err
}

// retryTops reads what is in the top directories that appeared (or came
// back) since they were last watched themselves.
func (w *watcher) retryTops() {
	for _, dir := range []string{w.st.Paths.SessionsDir, w.st.Paths.InboxDir, w.st.Paths.ProjectsDir} {
		was := w.tops[dir]
		w.tops[dir] = w.dw.Watching(dir)
		if was || !w.tops[dir] {
			continue
		}
		switch dir {
		case w.st.Paths.SessionsDir:
			w.scanRegistry()
		case w.st.Paths.InboxDir:
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				w.inboxFile(e.Name())
			}
		case w.st.Paths.ProjectsDir:
			for _, s := range w.byPID {
				if w.add(s.projDir) == nil {
					w.transcriptChanged(s)
					w.watchSessionDir(s, false)
				}
			}
		}
	}
}

// handle routes one file event by the directory it happened in.
func (w *watcher) handle(ev fsnotify.Event) {
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	if w.dw.Handle(ev) {
		w.retryTops()
	}
	switch {
	case dir == w.st.Paths.SessionsDir:
		if pid, ok := rowPID(name); ok {
			w.registryRow(pid)
		}
	case dir == w.st.Paths.InboxDir:
		w.inboxFile(name)
	case dir == w.st.Paths.ProjectsDir:
		if ss := w.projects[ev.Name]; len(ss) > 0 && ev.Has(fsnotify.Create) {
			// A session's project directory appeared.
			w.add(ev.Name)
			for _, s := range ss {
				w.transcriptChanged(s)
				w.watchSessionDir(s, false)
			}
		}
	case len(w.projects[dir]) > 0:
		for _, s := range w.projects[dir] {
			switch {
			case ev.Name == s.tpath:
				w.transcriptChanged(s)
			case name == s.row.SessionID && ev.Has(fsnotify.Create):
				w.watchSessionDir(s, false)
			}
		}
	case w.sessDirs[dir] != nil:
		if name == riderwalk.Dir && ev.Has(fsnotify.Create) {
			w.watchSessionDir(w.sessDirs[dir], false)
		}
	case w.riderDirs[dir] != nil:
		w.riderFile(w.riderDirs[dir], name, false)
	}
}

func rowPID(name string) (int, bool) {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(base)
	return pid, err == nil && pid > 0
}

// recheck reads every file the watcher follows as if each had had an
// event: after the kernel dropped events, what changed meanwhile comes as
// events. Each file is read from where the watcher had read it to (an
// inbox's and an ack's offsets, a Follower's), so nothing already told is
// told again. A session that started meanwhile is taken as at the start,
// from its transcript's end.
func (w *watcher) recheck() {
	w.scanRegistry()
	if ents, err := os.ReadDir(w.st.Paths.InboxDir); err == nil {
		for _, e := range ents {
			w.inboxFile(e.Name())
		}
	}
	for _, pid := range slices.Sorted(maps.Keys(w.byPID)) {
		s := w.byPID[pid]
		if s == nil || s.projDir == "" {
			continue // ended meanwhile (a heartbeat just read said so)
		}
		if w.add(s.projDir) != nil {
			continue // no project directory yet: its creation is an event
		}
		// The riders first, as their rows come before the turn's end; a
		// meta file is read again too (it may say finished).
		for _, id := range slices.Sorted(maps.Keys(s.riders)) {
			if r := s.riders[id]; r != nil && !r.finished {
				w.riderFile(s, "agent-"+id+".meta.json", false)
			}
		}
		if s.ridersDir != "" {
			w.newRiders(s, false) // the riders that appeared meanwhile
		} else {
			w.watchSessionDir(s, false) // its directories appeared meanwhile
		}
		w.transcriptChanged(s)
	}
}

// scanRegistry reads every row: at the start, and after dropped events.
func (w *watcher) scanRegistry() error {
	ents, err := os.ReadDir(w.st.Paths.SessionsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	seen := map[int]bool{}
	for _, e := range ents {
		if pid, ok := rowPID(e.Name()); ok {
			seen[pid] = true
			w.registryRow(pid)
		}
	}
	for pid := range w.byPID {
		if !seen[pid] {
			w.registryRow(pid)
		}
	}
	return nil
}

// registryRow reads the one row of pid again and emits what changed.
func (w *watcher) registryRow(pid int) {
	path := filepath.Join(w.st.Paths.SessionsDir, strconv.Itoa(pid)+".json")
	row, err := station.ReadRow(path)
	old := w.byPID[pid]
	gone := err != nil && errors.Is(err, os.ErrNotExist)
	if err != nil && !gone {
		return // being written, or not a row: the next event tells
	}
	live := !gone && row.PID == pid && w.st.Proc.Alive(row.PID, row.ProcStart)
	if old != nil && (!live || row.SessionID != old.row.SessionID) {
		w.end(old)
		old = nil
	}
	if !live || (w.only != "" && row.SessionID != w.only) {
		return
	}
	if old == nil {
		w.start(row)
		return
	}
	if row.Status != old.row.Status {
		w.emit(Event{Event: EventStatus, Session: row.SessionID, Name: row.Name, PID: row.PID, Status: row.Status})
	}
	if row.CWD != old.row.CWD {
		w.unwatchProject(old)
		old.row = row
		w.watchProject(old)
		return
	}
	old.row = row
}

func (w *watcher) start(row station.Row) {
	s := &wsession{row: row, riders: map[string]*wrider{}, acked: map[string]bool{}, turnRider: map[string]bool{}}
	w.byPID[row.PID] = s
	w.bySID[row.SessionID] = s
	w.emit(Event{Event: EventSessionStarted, Session: row.SessionID, Name: row.Name, PID: row.PID, Status: row.Status})
	w.waitExit(s)
	w.watchProject(s)
	w.checkDoorman(row.SessionID)
}

// waitExit makes the session's process exit an event: a pidfd waited on
// by the runtime's poller, so a held session costs no wake-up until it
// exits. Where pidfds are not to be had (another OS, an old kernel, a
// station whose process table is not this machine's /proc) the session
// is polled every Liveness instead.
func (w *watcher) waitExit(s *wsession) {
	pe, err := w.openExit(s.row.PID, s.row.ProcStart)
	if err != nil {
		s.polled = true
		return
	}
	s.exit = pe
	go w.awaitExit(pe, exitNote{s: s, pid: s.row.PID})
}

// openExit opens the exit of pid (whose start time is procStart, "" for
// any) as an event, checking after the open that pid is still that
// process. A process gone already is a ProcExit that has exited.
func (w *watcher) openExit(pid int, procStart string) (*fsx.ProcExit, error) {
	if w.st.Proc.Root != "" || w.liveness < 0 {
		return nil, fsx.ErrNoProcExit // a process table not this machine's: poll it
	}
	pe, err := fsx.OpenProcExit(pid)
	if errors.Is(err, os.ErrProcessDone) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !w.st.Proc.Alive(pid, procStart) {
		pe.Close()
		return nil, nil // another process under a recycled pid
	}
	return pe, nil
}

// awaitExit sends x once its process exits; a closed ProcExit (the
// session ended otherwise, the watch ends) sends nothing.
func (w *watcher) awaitExit(pe *fsx.ProcExit, x exitNote) {
	if pe == nil {
		select {
		case w.exits <- x:
		case <-w.ctx.Done():
		}
		return
	}
	if pe.Wait(w.ctx) != nil {
		return
	}
	select {
	case w.exits <- x:
	case <-w.ctx.Done():
	}
}

// exited handles a process exit the watcher waited for.
func (w *watcher) exited(x exitNote) {
	s := x.s
	if w.byPID[s.row.PID] != s {
		return // ended meanwhile
	}
	if x.doorman {
		if s.doormanPID == x.pid {
			s.doormanPID = 0
			w.checkDoorman(s.row.SessionID)
		}
		return
	}
	w.end(s)
}

// watchDoorman waits for the exit of the up doorman pid of s, so a
// doorman that dies is seen at once, not when its heartbeat goes stale.
func (w *watcher) watchDoorman(s *wsession, pid int) {
	if pid <= 0 || pid == s.doormanPID {
		return
	}
	s.doormanEx.Close()
	s.doormanEx, s.doormanPID = nil, 0
	pe, err := w.openExit(pid, "")
	if err != nil {
		return // the stale timer still tells
	}
	s.doormanEx, s.doormanPID = pe, pid
	go w.awaitExit(pe, exitNote{s: s, doorman: true, pid: pid})
}

func (w *watcher) end(s *wsession) {
	w.release(s, true)
	delete(w.byPID, s.row.PID)
	if w.bySID[s.row.SessionID] == s {
		delete(w.bySID, s.row.SessionID)
	}
	w.unwatchProject(s)
	s.close()
	w.emit(Event{Event: EventSessionEnded, Session: s.row.SessionID, Name: s.row.Name, PID: s.row.PID})
}

// watchProject follows the session's transcript from its end now, and its
// riders.
func (w *watcher) watchProject(s *wsession) {
	s.projDir = filepath.Join(w.st.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(s.row.CWD))
	s.tpath = filepath.Join(s.projDir, s.row.SessionID+transcriptfile.Ext)
	w.projects[s.projDir] = append(w.projects[s.projDir], s)
	var from int64
	if fi, err := os.Lstat(s.tpath); err == nil {
		from = fi.Size()
	}
	if !s.costKnown && !s.costLooking && from > 0 {
		// What its transcript tells of its cost up to from, looked back
		// for off the loop (a session that moves to another cwd keeps
		// the cost read so far).
		s.costLooking, s.firstMsg, s.firstTokens = true, "", 0
		w.lookMu.Lock()
		w.looks = append(w.looks, costLook{s: s, path: s.tpath, from: from})
		w.lookMu.Unlock()
		select {
		case w.lookWake <- struct{}{}:
		default:
		}
	}
	s.follower = transcript.Follow(w.ctx, s.tpath, from, transcript.FollowOptions{MaxRow: maxWatchRow})
	if w.add(s.projDir) == nil {
		w.watchSessionDir(s, true)
	}
}

func (w *watcher) unwatchProject(s *wsession) {
	s.close()
	s.follower, s.riders = nil, map[string]*wrider{}
	ss := w.projects[s.projDir]
	for i, x := range ss {
		if x == s {
			ss = append(ss[:i], ss[i+1:]...)
			break
		}
	}
	if len(ss) == 0 {
		delete(w.projects, s.projDir)
		w.remove(s.projDir)
	} else {
		w.projects[s.projDir] = ss
	}
	sdir := filepath.Join(s.projDir, s.row.SessionID)
	delete(w.sessDirs, sdir)
	w.remove(sdir)
	if s.ridersDir != "" {
		delete(w.riderDirs, s.ridersDir)
		w.remove(s.ridersDir)
		s.ridersDir = ""
	}
}

// watchSessionDir watches <project>/<sid> and, once it exists, its
// subagents directory, and takes the riders already there. With existing
// (the directory was there when the session was first seen) those riders
// are old: one that has finished is left alone, one still riding is
// followed from its end with an Initial rider-started.
func (w *watcher) watchSessionDir(s *wsession, existing bool) {
	sdir := filepath.Join(s.projDir, s.row.SessionID)
	if w.add(sdir) != nil {
		return
	}
	w.sessDirs[sdir] = s
	rdir := filepath.Join(sdir, riderwalk.Dir)
	if s.ridersDir == rdir || w.add(rdir) != nil {
		return
	}
	s.ridersDir = rdir
	w.riderDirs[rdir] = s
	w.newRiders(s, existing)
}

// newRiders takes the riders in the session's subagents directory that
// the watcher does not know yet (old ones with existing; see
// watchSessionDir).
func (w *watcher) newRiders(s *wsession, existing bool) {
	ents, _ := os.ReadDir(s.ridersDir)
	for _, e := range ents {
		if id, ok := agentOf(e.Name()); ok && s.riders[id] == nil {
			w.riderFile(s, e.Name(), existing)
		}
	}
}

// agentOf returns the agent id of agent-<id>.jsonl or agent-<id>.meta.json.
func agentOf(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "agent-")
	if !ok {
		return "", false
	}
	for _, suf := range []string{".meta.json", transcriptfile.Ext} {
		if id, ok := strings.CutSuffix(rest, suf); ok && id != "" {
			return id, true
		}
	}
	return "", false
}

// riderFile handles a change to a rider's transcript or meta file. An old
// rider (see watchSessionDir) is read once with transcript.ReadRider.
func (w *watcher) riderFile(s *wsession, name string, old bool) {
	id, ok := agentOf(name)
	if !ok {
		return
	}
	base := filepath.Join(s.ridersDir, "agent-"+id)
	r := s.riders[id]
	if r == nil {
		r = &wrider{}
		s.riders[id] = r
	}
	if !r.hasMeta || strings.HasSuffix(name, ".meta.json") {
		// The meta file is read when it changes, not on every row.
		if m, err := transcriptfile.ReadRiderMeta(base + ".meta.json"); err == nil {
			r.meta, r.hasMeta = m, true
		}
	}
	meta := r.meta
	if !r.started {
		fi, err := trustedFile(base + transcriptfile.Ext)
		switch {
		case err == nil:
		case errors.Is(err, os.ErrNotExist) && r.hasMeta: // its meta came first
		default:
			// Neither file yet, or a transcript that cannot be trusted (a
			// FIFO, a directory, a symlink, another user's): left out, as
			// riders and sessions leave it out, until a file they would
			// read stands there.
			return
		}
		r.started = true
		var from int64
		if old && err == nil {
			rd, rerr := transcript.ReadRider(base+transcriptfile.Ext, w.now(), 0)
			if rerr == nil && rd.State == transcript.QuietFinished || meta.Finished {
				r.finished = true
				return
			}
			from = fi.Size()
		}
		r.follower = transcript.Follow(w.ctx, base+transcriptfile.Ext, from, transcript.FollowOptions{MaxRow: maxWatchRow})
		w.sessEmit(s, Event{Event: EventRiderStarted, Session: s.row.SessionID, Agent: id, Description: meta.Description})
	}
	if r.finished {
		return
	}
	final := meta.Finished
	if r.follower != nil {
		for {
			l, err := r.follower.Next(w.done)
			if err != nil {
				break
			}
			row, perr := transcriptfile.ParseRow(l.Raw)
			if perr == nil && row.FinalAnswer() {
				final = true
			}
		}
	}
	if final {
		r.finished = true
		if r.follower != nil {
			r.follower.Close()
			r.follower = nil
		}
		w.sessEmit(s, Event{Event: EventRiderFinished, Session: s.row.SessionID, Agent: id, Description: meta.Description})
	}
}

// trustedFile is the FileInfo of path when it is a file the watch would
// read: a regular file of the user's that others cannot write (it is
// opened, without following a symlink or waiting on a FIFO, and closed).
func trustedFile(path string) (fs.FileInfo, error) {
	f, fi, err := transcriptfile.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	f.Close()
	return fi, nil
}

// How long an event is held back, at most, for the fact before it: a
// line-seen for its ack (the doorman acks within moments of the row),
// a turn-ended for its riders' last rows (Claude Code flushes its
// transcript writes every 100 ms, so a rider's last row lands at most a
// flush or two after the answer; a rider run in the background outlives
// its turn and costs the turn-ended this delay).
const (
	holdSeen = 2 * time.Second
	holdTurn = 300 * time.Millisecond
)

func holdFor(e Event) time.Duration {
	if e.Event == EventTurnEnded {
		return holdTurn
	}
	return holdSeen
}

// sessEmit emits an event of session s in the order the facts happened
// (see Watch): behind any event of s held back, and held itself when
// what precedes it is not known yet.
func (w *watcher) sessEmit(s *wsession, e Event) {
	if e.TS == "" {
		e.TS = formatTime(w.now())
	}
	if e.Event == EventRiderStarted || e.Event == EventRiderFinished {
		// A rider's events belong before a turn-ended held for it.
		if e.Event == EventRiderStarted {
			s.turnRider[e.Agent] = true
		}
		for i, h := range s.held {
			if h.e.Event == EventTurnEnded {
				s.held = slices.Insert(s.held, i, heldEvent{e: e, until: h.until})
				w.release(s, false)
				return
			}
		}
	}
	if e.Event == EventTurnEnded && len(s.held) == 0 {
		w.catchUpRiders(s)
	}
	if len(s.held) > 0 || !w.ready(s, e) {
		s.held = append(s.held, heldEvent{e: e, until: w.now().Add(holdFor(e))})
		w.armHold()
		return
	}
	w.emitDone(s, e)
}

// emitDone emits e of s and notes what it tells of the session.
func (w *watcher) emitDone(s *wsession, e Event) {
	if e.Event == EventTurnEnded {
		clear(s.turnRider)
	}
	w.emit(e)
}

// ready reports whether e can be emitted now: a line-seen once the
// line's ack was read (or none is to come), a turn-ended once the riders
// started in the turn have finished.
func (w *watcher) ready(s *wsession, e Event) bool {
	switch e.Event {
	case EventLineSeen:
		if s.acked[e.MsgID] || s.doorman != DoormanUp {
			return true
		}
		in := w.inboxes[s.row.SessionID]
		return in == nil || in.unacked <= 0 // no line of this watch waits for its ack
	case EventTurnEnded:
		for id := range s.turnRider {
			if r := s.riders[id]; r != nil && r.started && !r.finished {
				return false
			}
		}
	}
	return true
}

// catchUpRiders reads what the session's riders wrote that the watcher
// has not read yet: a turn-ended is judged on the riders as they are.
func (w *watcher) catchUpRiders(s *wsession) {
	if s.ridersDir == "" && s.projDir != "" {
		w.watchSessionDir(s, false)
	}
	for _, id := range slices.Sorted(maps.Keys(s.riders)) {
		if r := s.riders[id]; r.started && !r.finished {
			w.riderFile(s, "agent-"+id+transcriptfile.Ext, false)
		}
	}
}

// release emits the held events of s that are ready now, in order; with
// force (the session ends, its doorman is gone) or past their bound, all.
func (w *watcher) release(s *wsession, force bool) {
	now := w.now()
	for len(s.held) > 0 {
		h := s.held[0]
		if !force && now.Before(h.until) && !w.ready(s, h.e) {
			break
		}
		s.held = s.held[1:]
		w.emitDone(s, h.e)
	}
	if len(s.held) == 0 {
		s.held = nil
	}
}

// armHold sets the hold timer to the earliest bound of a held event.
func (w *watcher) armHold() {
	var next time.Time
	for _, s := range w.byPID {
		if len(s.held) > 0 && (next.IsZero() || s.held[0].until.Before(next)) {
			next = s.held[0].until
		}
	}
	if w.hold != nil {
		w.hold.Stop()
		w.hold = nil
	}
	if !next.IsZero() {
		w.hold = time.NewTimer(max(next.Sub(w.now()), 0))
	}
}

// transcriptChanged reads the rows appended to the session's transcript.
func (w *watcher) transcriptChanged(s *wsession) {
	if s.follower == nil {
		return
	}
	costMoved, again, ok := false, false, false
	defer func() {
		if costMoved && !s.costLooking {
			w.sessEmit(s, Event{Event: EventCost, Session: s.row.SessionID, Cost: s.costCopy()})
		}
	}()
	for {
		l, err := s.follower.Next(w.done)
		if err != nil {
			if errors.Is(err, transcript.ErrRowTooLong) {
				w.emit(Event{Event: EventWarning, Session: s.row.SessionID, Text: fmt.Sprintf("transcript %s: a row at offset %d is longer than %d MiB: skipped", s.tpath, s.follower.Offset(), maxWatchRow>>20)})
				continue
			}
			if errors.Is(err, transcript.ErrTruncated) || errors.Is(err, transcript.ErrReplaced) {
				continue
			}
			if followerEnded(err) && !again {
				// Once: a file that cannot be followed is tried at the
				// next event, not in a loop.
				again = true
				if s.follower, ok = w.followAgain(s.follower, s.tpath); ok {
					continue
				}
			}
			return
		}
		if !bytes.Contains(l.Raw, []byte(`"msg_id"`)) && !bytes.Contains(l.Raw, []byte(`"assistant"`)) && !bytes.Contains(l.Raw, []byte(transcriptfile.CostStateMark)) {
			continue // neither a peer line's row nor an answer nor a cost: skip the parse
		}
		row, err := transcriptfile.ParseRow(l.Raw)
		if err != nil || row.IsSidechain {
			continue
		}
		if s.addCost(&row) {
			costMoved = true
		}
		switch id := row.PeerLineMsgID(); {
		case id != "":
			w.sessEmit(s, Event{Event: EventLineSeen, Session: s.row.SessionID, MsgID: id})
		case row.FinalAnswer():
			var texts []string
			for _, b := range row.Message.Blocks() {
				if b.Type == "text" && b.Text != "" {
					texts = append(texts, b.Text)
				}
			}
			w.sessEmit(s, Event{Event: EventTurnEnded, Session: s.row.SessionID, Text: clip(strings.Join(texts, "\n"))})
		}
	}
}

// followerEnded reports whether err, from a Follower's Next, ended it: a
// FIFO, a symlink or a file it could not open or read stood at its path,
// and a Follower does not go on from that. The errors a Follower goes on
// after, and its context's (nothing more to read now), are not.
func followerEnded(err error) bool {
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		!errors.Is(err, transcript.ErrRowTooLong) && !errors.Is(err, transcript.ErrTruncated) &&
		!errors.Is(err, transcript.ErrReplaced) && !errors.Is(err, os.ErrClosed)
}

// followAgain replaces the ended Follower f of path with one from the
// start of the file that stands there now, once that is a regular file
// (a path that was briefly a FIFO or a symlink is followed again; the new
// Follower checks the file as the first did); while it is not, it keeps f
// and returns false.
func (w *watcher) followAgain(f *transcript.Follower, path string) (*transcript.Follower, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return f, false
	}
	f.Drop()
	return transcript.Follow(w.ctx, path, 0, transcript.FollowOptions{MaxRow: maxWatchRow}), true
}

// addCost folds a row of the session's own transcript into its cost and
// reports whether the cost moved: a cost-state row replaces it (its
// figure counts every request before it), a request adds its tokens.
func (s *wsession) addCost(row *transcriptfile.Row) bool {
	if c, ok := stateCost(row); ok {
		// It counts all before it: what a look back finds is moot.
		s.cost, s.costKnown, s.costLooking = c, true, false
		s.tally = transcriptfile.TokenTally{}
		return true
	}
	before := s.tally.Tokens
	if !s.tally.Add(row) || s.tally.Tokens == before {
		return false
	}
	if s.costLooking && s.firstMsg == "" {
		s.firstMsg, s.firstTokens = row.Message.ID, s.tally.Tokens-before
	}
	s.cost.Tokens += s.tally.Tokens - before
	s.costKnown = true
	return true
}

// lookBacks runs the queued look backs, one at a time, until the watch
// ends.
func (w *watcher) lookBacks() {
	defer close(w.lookDone)
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.lookWake:
		}
		for {
			w.lookMu.Lock()
			if len(w.looks) == 0 {
				w.looks = nil
				w.lookMu.Unlock()
				break
			}
			l := w.looks[0]
			w.looks = w.looks[1:]
			w.lookMu.Unlock()
			l.c, l.known, l.lastMsg = lookBackCost(l.path, l.from)
			select {
			case w.looked <- l:
			case <-w.ctx.Done():
				return
			}
		}
	}
}

// costLooked folds a look back's result into its session's cost, unless
// the session ended or a cost-state row read since made it moot: the
// requests it found before where the follower began, then the follower's
// since (a request whose rows straddle that point counted once).
func (w *watcher) costLooked(l costLook) {
	s := l.s
	if w.byPID[s.row.PID] != s || !s.costLooking {
		return
	}
	s.costLooking = false
	live := s.cost.Tokens
	if l.lastMsg != "" && l.lastMsg == s.firstMsg {
		live -= s.firstTokens
	}
	c := l.c
	c.Tokens += live
	s.cost, s.costKnown = c, l.known || live > 0
	if s.firstMsg == "" && l.lastMsg != "" {
		// The follower's next rows may be the last request's still.
		s.tally.Add(&transcriptfile.Row{Type: transcriptfile.RowAssistant, Message: &transcriptfile.Message{ID: l.lastMsg}})
	}
	if s.costKnown {
		w.sessEmit(s, Event{Event: EventCost, Session: s.row.SessionID, Cost: s.costCopy()})
	}
}

// stateCost is the cost a cost-state row tells; false for any other row
// (and for a cost-state row without its figure).
func stateCost(row *transcriptfile.Row) (Cost, bool) {
	if row.Type != transcriptfile.RowCostState || row.TotalCostUSD == nil {
		return Cost{}, false
	}
	usd := *row.TotalCostUSD
	return Cost{USD: &usd, UnknownModelCost: row.HasUnknownModelCost}, true
}

// costCopy is the session's cost for an event, which holds its own copy.
func (s *wsession) costCopy() *Cost {
	c := s.cost
	if c.USD != nil {
		usd := *c.USD
		c.USD = &usd
	}
	return &c
}

// lookBackCost reads what the transcript at path, up to size, tells of
// the session's cost: its last cost-state row and the requests after it,
// read back from size at most CostLookBack bytes (whatever the file's
// size). known is false when it tells nothing (no transcript, no cost-state
// row and no request). lastMsg is the id of the last request's message
// before size, whose rows after size are not to count again.
func lookBackCost(path string, size int64) (c Cost, known bool, lastMsg string) {
	f, fi, err := transcriptfile.OpenRegular(path)
	if err != nil {
		return Cost{}, false, ""
	}
	defer f.Close()
	b := transcriptfile.LookBackCost(f, min(size, fi.Size()), CostLookBack)
	if b.State != nil {
		c, _ = stateCost(b.State)
	}
	c.Bounded = b.Bounded
	c.Tokens = b.Tally.Tokens
	return c, c.USD != nil || c.Tokens > 0 || c.Bounded, b.LastMsg
}

// scanInboxes notes where every inbox and ack file ends at the start: only
// what is appended later is an event. An inbox first seen later is new.
func (w *watcher) scanInboxes() {
	ents, _ := os.ReadDir(w.st.Paths.InboxDir)
	for _, e := range ents {
		sid, ok := strings.CutSuffix(e.Name(), ".inbox")
		if !ok || !station.IsSessionID(sid) {
			continue
		}
		f := inboxv1.FilesFor(w.st.Paths.InboxDir, sid)
		w.inboxes[sid] = &winbox{inboxOff: fileSize(f.Inbox), ackOff: fileSize(f.Ack)}
	}
}

func fileSize(path string) int64 {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// inboxFile handles a change in the inbox directory.
func (w *watcher) inboxFile(name string) {
	var sid, kind string
	for _, suf := range []string{".inbox.doorman.json", ".inbox.ack", ".inbox"} {
		if base, ok := strings.CutSuffix(name, suf); ok {
			sid, kind = base, suf
			break
		}
	}
	if !station.IsSessionID(sid) || (w.only != "" && sid != w.only) {
		return
	}
	in := w.inboxes[sid]
	if in == nil {
		in = &winbox{} // a new inbox: everything in it is new
		w.inboxes[sid] = in
	}
	f := inboxv1.FilesFor(w.st.Paths.InboxDir, sid)
	switch kind {
	case ".inbox":
		w.readLines(f.Inbox, in, func(line []byte, off int64) {
			o := off
			if len(line) > inboxv1.MaxLineBytes {
				w.emit(Event{Event: EventWarning, Session: sid, Text: fmt.Sprintf("inbox %s: the line at offset %d is longer than the contract's %d bytes: skipped", f.Inbox, off, inboxv1.MaxLineBytes)})
				return
			}
			in.unacked++
			w.emit(Event{Event: EventLineQueued, Session: sid, Line: clip(line), LineOffset: &o})
		})
	case ".inbox.ack":
		fh, err := fsx.OpenRead(f.Ack)
		if err != nil {
			return
		}
		defer fh.Close()
		if fi, err := fh.Stat(); err == nil && fi.Size() < in.ackOff {
			in.ackOff = 0
		}
		if _, err := fh.Seek(in.ackOff, io.SeekStart); err != nil {
			return
		}
		inbox.ScanAcks(fh, in.ackOff, func(a inboxv1.Ack, end int64) bool {
			in.ackOff = end
			e := Event{Event: EventLineDelivered, Session: sid, MsgID: a.MsgID, Class: string(a.Class)}
			if a.LineOffset != nil {
				o := *a.LineOffset
				e.LineOffset = &o
			}
			w.emit(e) // the delivery came first: ahead of what is held for it
			in.unacked = max(in.unacked-1, 0)
			if s := w.bySID[sid]; s != nil {
				if len(s.acked) > 1000 {
					clear(s.acked)
				}
				s.acked[a.MsgID] = true
				w.release(s, false)
			}
			return true
		})
		w.armHold()
	case ".inbox.doorman.json":
		w.checkDoorman(sid)
	}
}

// checkDoorman reads sid's heartbeat and emits a doorman event when its
// state changed; a stopped doorman is also the moment to check whether the
// session's process is still there.
func (w *watcher) checkDoorman(sid string) {
	s := w.bySID[sid]
	if s == nil {
		return
	}
	now := w.now()
	f := inboxv1.FilesFor(w.st.Paths.InboxDir, sid)
	h, fr := inbox.HeartbeatFreshness(f.Heartbeat, now, sid, func(pid int) bool { return w.st.Proc.Alive(pid, "") })
	state := DoormanNotFresh
	switch {
	case fr.Fresh:
		state = DoormanUp
		s.staleAt = now.Add(inboxv1.FreshFor - fr.Age + 10*time.Millisecond)
	case h.State == inboxv1.StateStopped:
		state = DoormanStopped
	}
	changed := state != s.doorman
	s.doorman, s.reason = state, ""
	if state == DoormanNotFresh {
		s.reason = string(fr.Reason)
	}
	if state == DoormanUp {
		w.armStale()
		w.watchDoorman(s, h.PID)
	} else if len(s.held) > 0 {
		w.release(s, false) // no ack is to come from it
		w.armHold()
	}
	if changed {
		w.emit(Event{Event: EventDoorman, Session: sid, Doorman: state, Reason: s.reason})
	}
	if state != DoormanUp && !w.st.Proc.Alive(s.row.PID, s.row.ProcStart) {
		w.end(s)
	}
}

// armStale sets the timer to the earliest heartbeat expiry of an up doorman.
func (w *watcher) armStale() {
	var next time.Time
	for _, s := range w.byPID {
		if s.doorman == DoormanUp && (next.IsZero() || s.staleAt.Before(next)) {
			next = s.staleAt
		}
	}
	if next.IsZero() {
		return
	}
	d := max(next.Sub(w.now()), 0)
	if w.stale == nil {
		w.stale = time.NewTimer(d)
		return
	}
	w.stale.Reset(d)
}

// readLines calls fn for each complete line of path from in.inboxOff on,
// and moves in.inboxOff to where the next unread line starts. A file
// shorter than that was truncated or replaced: it is read again from 0.
//
// Every read is bounded: the file is read readChunk bytes at a time into
// one buffer, whatever its size. A line longer than the contract's cap is
// handed to fn once when complete and short enough to see whole (fn
// reports it), or, once longer than the cap without its "\n", handed with
// its first bytes only and then passed over up to its "\n" across events
// without being held or read again. An unterminated tail within the cap is
// read again at the next event (at most the cap).
func (w *watcher) readLines(path string, in *winbox, fn func(line []byte, off int64)) {
	f, err := fsx.OpenRead(path)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	size := fi.Size()
	if size < in.inboxOff {
		in.inboxOff, in.skipping = 0, false
	}
	if w.buf == nil && size > in.inboxOff {
		w.buf = make([]byte, readChunk)
	}
	for in.inboxOff < size {
		if in.skipping {
			// A hole holds no "\n": pass over it unread (a sparse file).
			if next, err := f.Seek(in.inboxOff, unix.SEEK_DATA); err == nil && next > in.inboxOff {
				in.inboxOff = min(next, size)
				continue
			} else if errors.Is(err, unix.ENXIO) {
				in.inboxOff = size // a hole to the end
				return
			}
		}
		want := int(min(int64(len(w.buf)), size-in.inboxOff))
		n, _ := f.ReadAt(w.buf[:want], in.inboxOff)
		if n == 0 {
			return
		}
		chunk := w.buf[:n]
		if in.skipping {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				in.inboxOff += int64(n)
				continue
			}
			in.inboxOff += int64(i) + 1
			in.skipping = false
			chunk = chunk[i+1:]
		}
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				break
			}
			if line := bytes.TrimSuffix(chunk[:i], []byte{'\r'}); len(bytes.TrimSpace(line)) > 0 {
				fn(line, in.inboxOff)
			}
			in.inboxOff += int64(i) + 1
			chunk = chunk[i+1:]
		}
		if len(chunk) > inboxv1.MaxLineBytes+1 {
			// A line past the cap with no "\n" in sight: report it now
			// and pass over the rest of it.
			fn(chunk, in.inboxOff)
			in.inboxOff += int64(len(chunk))
			in.skipping = true
			continue
		}
		if n < want || in.inboxOff+int64(len(chunk)) >= size {
			return // an unterminated tail within the cap: the next event
		}
		// The start of a line cut by the chunk: read on from it.
	}
}

// clip returns s cut to textLimit characters (a rune of invalid UTF-8
// counts as one), without copying more of s than it keeps.
func clip[T string | []byte](s T) string {
	i := 0
	for n := 0; n < textLimit && i < len(s); n++ {
		var size int
		switch b := any(s).(type) {
		case string:
			_, size = utf8.DecodeRuneInString(b[i:])
		case []byte:
			_, size = utf8.DecodeRune(b[i:])
		}
		i += size
	}
	return string(s[:i])
}
