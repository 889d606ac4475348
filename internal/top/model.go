package top

import (
	"context"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/receipt"
)

// A Sender sends one line and returns its verdict: *claudeinbox.Sender,
// the CLI's own, with its receipts.
type Sender interface {
	Send(ctx context.Context, req claudeinbox.Request) (claudeinbox.Verdict, error)
}

// Options are the view's inputs. Events is required; the others may be
// left out, which turns off what needs them.
type Options struct {
	// Events is the station's event stream (observatory.Watch). The view
	// ends when it closes.
	Events <-chan observatory.Event
	// Document returns the observatory document of the station (only ""
	// ) or of one session: lineage, riders and pending lines, which the
	// stream does not carry. The view asks for the station's when it
	// opens (and after an overflow) and for a session's when it starts.
	// With Stations, station names the station asked ("" is all of
	// them) and every session of the document carries its Station.
	Document func(ctx context.Context, station, only string) (*observatory.Document, error)
	// Sender sends the line typed after `s`; nil turns `s` off.
	Sender Sender
	// Stations, when set, groups the view by station: the events and the
	// documents carry their station (fleet.Watch, fleet.MergeSessions),
	// each station has a header in this order, a station-lost event
	// shows in its header until station-back. A session's line goes
	// through Senders[its station], and Sender and Witness are not used
	// for it (the witness reads this machine's transcripts).
	Stations []string
	Senders  map[string]Sender
	// From is the sender name of the lines sent ("" is the sender's
	// default).
	From string
	// Witness marks the selected session's transcript before a line is
	// sent and waits for the reply when `a` asks for it
	// (transcript.Witness); nil turns `a` off.
	Witness claudeinbox.ReplyWitness
	// ReplyWait bounds the wait for a reply; 0 means ten minutes.
	ReplyWait time.Duration
	// Exchanges returns what `oo-claude read` prints for a session, for
	// enter; nil turns enter off.
	Exchanges func(station, sessionID string) (string, error)
	// Now is the clock of the header and the ages; nil means time.Now.
	Now func() time.Time
	// Tick is how often the header and the ages are redrawn when nothing
	// happens; 0 means five seconds, below 0 never.
	Tick time.Duration
	// Station names the station in the header.
	Station string
	// Color allows colour (the caller leaves it false under NO_COLOR or
	// on a dumb terminal); UTF8 allows the tree's line glyphs (false: ASCII).
	Color, UTF8 bool
	// Environ is what [Run] tells the framework of the terminal, as
	// KEY=value (TERM, TERM_PROGRAM, SSH_TTY...); nil is nothing.
	Environ []string
}

// The merged watch's own events (fleet.EventStationLost and
// fleet.EventStationBack; the fleet is on the view's floor, so the names are
// matched here: the CLI's TestTopHosts sees the fleet's station-lost in a
// header).
const (
	eventStationLost = "station-lost"
	eventStationBack = "station-back"
)

// maxEvents is how many events the event pane keeps (newest last).
const maxEvents = 1000

// maxBatch is how many queued events one message carries, so a burst
// (the initial events of 200 sessions) costs one frame, not hundreds.
const maxBatch = 2000

type mode int

const (
	modeNormal mode = iota
	modeSend        // the line editor is open
	modeFilter      // the filter editor is open
	modeRead        // the selected session's exchanges
	modeHelp        // the keys
)

// session is what the view knows of one session.
type session struct {
	id, name, status, doorman string
	station                   string // with Options.Stations: the session's station
	reason                    string // why the doorman is not fresh
	pid                       int
	cwd                       string
	parent                    string
	started                   time.Time
	pending                   int64
	lastIn, lastOut           string
	cost                      *observatory.Cost // the stream's last cost event; nil: none came
	riders                    []rider
	seen                      []string // msg_ids the stream saw, newest last (a few)
	send                      *sendState
	gone                      bool // ended; kept for the verdict of a line sent to it
}

type rider struct {
	agent, description, last string
}

// sendState is the line sent to a session from the view and what became of
// it.
type sendState struct {
	line    string
	done    bool // the sender returned
	v       claudeinbox.Verdict
	err     error
	path    string // the transcript marked before the send
	from    int64
	markErr error
	seen    bool
	asked   bool // `a` asked for the reply
	replied bool // the reply wait ended
	reply   *receipt.Reply
	replyE  error
	// late is the class of the doorman's ack that the stream showed after
	// the sender stopped waiting (a timeout or queued verdict), and
	// lateMsgID its msg_id: the line was delivered after all.
	late      string
	lateMsgID string
}

// msgID is the msg_id of the line's delivery: the verdict's, or the late
// ack's.
func (st *sendState) msgID() string {
	if st.v.MsgID != "" {
		return st.v.MsgID
	}
	return st.lateMsgID
}

// delivered reports whether the line was delivered: by the verdict, or by
// an ack the stream showed later.
func (st *sendState) delivered() bool {
	return st.v.Class.Delivered() || st.late == string(claudeinbox.DeliveredStart) || st.late == string(claudeinbox.DeliveredSteer)
}

// Model is the view's state: a bubbletea Model. Build it with [New].
type Model struct {
	o   Options
	ctx context.Context

	w, h     int
	sessions map[string]*session
	docs     map[string]observatory.Session // the newest document's entry of each session
	names    map[string]string              // the name of every session the stream named, for the events of ended ones
	sel      string
	events   []observatory.Event
	filter   string
	mode     mode
	input    textinput.Model
	read     struct {
		sid, text string
		err       error
		top       int
	}
	note   string            // the footer's message
	lost   map[string]string // the stations lost, with why (Options.Stations)
	names2 map[string]string // each station's own name, from its document
	closed bool
	st     styles
}

// New returns the view's model for o; ctx bounds every command it starts
// (sends, reads, documents, replies).
func New(ctx context.Context, o Options) *Model {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick == 0 {
		o.Tick = 5 * time.Second
	}
	if o.ReplyWait <= 0 {
		o.ReplyWait = 10 * time.Minute
	}
	ti := textinput.New()
	ti.CharLimit = 0
	ti.Prompt = ""
	st := newStyles(o.Color, o.UTF8)
	// Plain text, no colour of the framework's choosing, and a cursor that
	// does not blink: an editor costs no frames while nothing is typed.
	ti.SetStyles(textinput.Styles{Cursor: textinput.CursorStyle{Blink: false}})
	return &Model{o: o, ctx: ctx, w: 80, h: 24, sessions: map[string]*session{}, names: map[string]string{}, docs: map[string]observatory.Session{}, input: ti, st: st,
		lost: map[string]string{}, names2: map[string]string{}}
}

// Messages of the model's own commands.
type (
	eventsMsg struct {
		evs    []observatory.Event
		closed bool
	}
	docMsg struct {
		station, only string
		doc           *observatory.Document
		err           error
	}
	sentMsg struct {
		sid     string
		v       claudeinbox.Verdict
		err     error
		path    string
		from    int64
		markErr error
	}
	replyMsg struct {
		sid, msgID string
		reply      *receipt.Reply
		err        error
	}
	readMsg struct {
		sid, text string
		err       error
	}
	tickMsg struct{}
)

// Init starts reading the stream, asks for the station's document and
// starts the clock.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.nextEvents(), m.loadDoc("", ""), m.tick())
}

func (m *Model) tick() tea.Cmd {
	if m.o.Tick < 0 {
		return nil
	}
	ctx, d := m.ctx, m.o.Tick
	return func() tea.Msg {
		// Not tea.Tick: its timer outlives the program by up to d.
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return tickMsg{}
		case <-ctx.Done():
			return nil
		}
	}
}

// nextEvents waits for the next event, then takes the ones already queued
// behind it without waiting.
func (m *Model) nextEvents() tea.Cmd {
	ch := m.o.Events
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{closed: true}
		}
		evs := []observatory.Event{ev}
		for len(evs) < maxBatch {
			select {
			case ev, ok := <-ch:
				if !ok {
					return eventsMsg{evs: evs, closed: true}
				}
				evs = append(evs, ev)
			default:
				return eventsMsg{evs: evs}
			}
		}
		return eventsMsg{evs: evs}
	}
}

func (m *Model) loadDoc(station, only string) tea.Cmd {
	if m.o.Document == nil {
		return nil
	}
	ctx, doc := m.ctx, m.o.Document
	return func() tea.Msg {
		d, err := doc(ctx, station, only)
		return docMsg{station: station, only: only, doc: d, err: err}
	}
}

// grouped reports whether the view shows several stations.
func (m *Model) grouped() bool { return len(m.o.Stations) > 0 }

// restart drops what the view knows of station's sessions (all of them
// when not grouped) but the lines sent from it: the station as it is
// follows, as initial events, and its document is asked again.
func (m *Model) restart(station string) tea.Cmd {
	for id, s := range m.sessions {
		if m.grouped() && s.station != station {
			continue
		}
		delete(m.sessions, id)
		if s.send != nil {
			m.sessions[id] = &session{id: id, station: s.station, name: s.name, send: s.send, parent: s.parent, cwd: s.cwd, started: s.started, gone: true}
		}
	}
	if !m.grouped() {
		station = ""
	}
	return m.loadDoc(station, "")
}

// Update applies one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = max(msg.Width, 1), max(msg.Height, 1)
		return m, nil
	case tickMsg:
		return m, m.tick()
	case eventsMsg:
		var cmds []tea.Cmd
		for _, ev := range msg.evs {
			if c := m.apply(ev); c != nil {
				cmds = append(cmds, c)
			}
		}
		if msg.closed {
			m.closed = true
			return m, tea.Quit
		}
		cmds = append(cmds, m.nextEvents())
		return m, tea.Batch(cmds...)
	case docMsg:
		m.applyDoc(msg)
		return m, nil
	case sentMsg:
		m.applySent(msg)
		return m, nil
	case replyMsg:
		if s := m.sessions[msg.sid]; s != nil && s.send != nil && s.send.msgID() == msg.msgID {
			s.send.replied, s.send.reply, s.send.replyE = true, msg.reply, msg.err
		}
		return m, nil
	case readMsg:
		if m.mode == modeRead && m.read.sid == msg.sid {
			m.read.text, m.read.err = msg.text, msg.err
		}
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		if m.mode == modeSend || m.mode == modeFilter {
			var cmd tea.Cmd
			m.input, cmd = m.input.Update(msg)
			return m, cmd
		}
		return m, nil
	}
	return m, nil
}

// apply folds one event of the stream into the view.
func (m *Model) apply(ev observatory.Event) tea.Cmd {
	m.events = append(m.events, ev)
	if len(m.events) >= 2*maxEvents {
		// Trimmed in halves, so a burst costs one copy, not one an event.
		m.events = slices.Delete(m.events, 0, len(m.events)-maxEvents)
	}
	if ev.Event == observatory.EventOverflow {
		// The station as it is follows, as Initial events: start again.
		return m.restart(ev.Station)
	}
	if m.grouped() {
		switch ev.Event {
		case eventStationLost:
			m.lost[ev.Station] = ev.Text
			if m.lost[ev.Station] == "" {
				m.lost[ev.Station] = "lost"
			}
			return nil
		case eventStationBack:
			// Its sessions as they are follow, as initial events.
			delete(m.lost, ev.Station)
			return m.restart(ev.Station)
		}
	}
	if ev.Session == "" {
		return nil
	}
	if ev.Name != "" {
		m.names[ev.Session] = ev.Name
	}
	s := m.sessions[ev.Session]
	if s == nil {
		if ev.Event == observatory.EventSessionEnded {
			return nil
		}
		s = &session{id: ev.Session}
		if m.grouped() {
			s.station = ev.Station
		}
		m.sessions[ev.Session] = s
		if d, ok := m.docs[ev.Session]; ok && (!m.grouped() || d.Station == ev.Station) {
			s.fromDoc(d)
		}
	}
	var cmd tea.Cmd
	switch ev.Event {
	case observatory.EventSessionStarted:
		s.name, s.pid, s.status, s.gone = ev.Name, ev.PID, ev.Status, false
		if !ev.Initial {
			if s.started.IsZero() {
				s.started = parseTS(ev.TS)
			}
			cmd = m.loadDoc(s.station, ev.Session)
		}
	case observatory.EventSessionEnded:
		delete(m.docs, ev.Session)
		if s.send != nil {
			s.gone, s.status = true, "ended"
		} else {
			delete(m.sessions, ev.Session)
		}
	case observatory.EventStatus:
		s.status = ev.Status
	case observatory.EventDoorman:
		s.doorman, s.reason = ev.Doorman, ev.Reason
	case observatory.EventLineQueued:
		s.pending++
		s.lastIn = ev.Line
	case observatory.EventLineDelivered:
		if s.pending > 0 {
			s.pending--
		}
		if st := s.send; st != nil && st.done && st.v.Written && !st.v.Class.Delivered() && ev.LineOffset != nil && *ev.LineOffset == st.v.LineOffset {
			st.late, st.lateMsgID = ev.Class, ev.MsgID
			st.seen = st.seen || slices.Contains(s.seen, ev.MsgID)
		}
	case observatory.EventLineSeen:
		s.seen = append(s.seen, ev.MsgID)
		if len(s.seen) > 16 {
			s.seen = s.seen[1:]
		}
		if s.send != nil && s.send.done && s.send.msgID() == ev.MsgID {
			s.send.seen = true
		}
	case observatory.EventTurnEnded:
		s.lastOut = ev.Text
	case observatory.EventCost:
		s.cost = ev.Cost
	case observatory.EventRiderStarted:
		if i := s.rider(ev.Agent); i >= 0 {
			s.riders[i].description = ev.Description
		} else {
			s.riders = append(s.riders, rider{agent: ev.Agent, description: ev.Description})
		}
	case observatory.EventRiderFinished:
		if i := s.rider(ev.Agent); i >= 0 {
			s.riders = slices.Delete(s.riders, i, i+1)
		}
	}
	return cmd
}

func (s *session) rider(agent string) int {
	return slices.IndexFunc(s.riders, func(r rider) bool { return r.agent == agent })
}

// applyDoc takes from a document what the stream does not carry: the
// lineage, the cwd, the start, the riders riding and the pending lines.
// The stream's own facts (name, status, doorman) win: they are newer.
func (m *Model) applyDoc(msg docMsg) {
	if msg.err != nil {
		// A merged document names the stations that did not answer and
		// still carries the others'.
		m.note = "document: " + msg.err.Error()
	}
	if msg.doc == nil {
		return
	}
	for _, st := range msg.doc.Stations {
		if st.Name != "" {
			m.names2[st.Station] = st.Name
		}
	}
	for _, d := range msg.doc.Sessions {
		if d.Status == observatory.StatusOffline {
			continue
		}
		m.docs[d.Session] = d
		if d.Name != "" && m.names[d.Session] == "" {
			m.names[d.Session] = d.Name
		}
		if s := m.sessions[d.Session]; s != nil && (!m.grouped() || s.station == d.Station) {
			s.fromDoc(d)
		}
	}
}

// fromDoc takes what the stream does not carry from d, the session's
// entry in a document. A session the document names before the stream
// does gets it when the stream names it: the stream decides who runs.
func (s *session) fromDoc(d observatory.Session) {
	s.parent, s.cwd = string(d.ParentSession), d.CWD
	if d.StartedMS > 0 {
		s.started = time.UnixMilli(d.StartedMS)
	}
	if s.name == "" {
		s.name = d.Name
	}
	if s.status == "" {
		s.status = d.Status
	}
	s.pending = d.Inbox.Pending
	if s.lastIn == "" {
		s.lastIn = string(d.Inbox.LastLine)
	}
	riders := make([]rider, 0, len(d.Riders))
	for _, r := range d.Riders {
		last := r.LastStep
		if last == "" {
			last = r.LastText
		}
		riders = append(riders, rider{agent: r.Agent, description: r.Description, last: last})
	}
	s.riders = riders
}

func (m *Model) applySent(msg sentMsg) {
	s := m.sessions[msg.sid]
	if s == nil || s.send == nil || s.send.done {
		return
	}
	st := s.send
	st.done, st.v, st.err, st.path, st.from, st.markErr = true, msg.v, msg.err, msg.path, msg.from, msg.markErr
	if msg.v.MsgID != "" && slices.Contains(s.seen, msg.v.MsgID) {
		st.seen = true
	}
}

// key handles a key in the current mode.
func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if k.String() == "ctrl+c" {
		return m, tea.Quit
	}
	switch m.mode {
	case modeSend, modeFilter:
		switch k.String() {
		case "esc":
			if m.mode == modeFilter {
				m.filter = ""
			}
			m.mode = modeNormal
			m.input.Blur()
			return m, nil
		case "enter":
			text := m.input.Value()
			m.input.Blur()
			if m.mode == modeFilter {
				m.mode, m.filter = modeNormal, strings.TrimSpace(text)
				return m, nil
			}
			m.mode = modeNormal
			return m, m.send(text)
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(k)
		return m, cmd
	case modeRead, modeHelp:
		switch k.String() {
		case "esc", "q", "enter", "?":
			m.mode = modeNormal
		case "up", "k":
			m.read.top = max(m.read.top-1, 0)
		case "down", "j":
			m.read.top++
		case "pgup", "b":
			m.read.top = max(m.read.top-(m.h-2), 0)
		case "pgdown", "space", "f":
			m.read.top += m.h - 2
		}
		return m, nil
	}
	m.note = ""
	switch k.String() {
	case "q":
		return m, tea.Quit
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "home", "g":
		m.move(-len(m.sessions))
	case "end", "G":
		m.move(len(m.sessions))
	case "enter":
		return m, m.openRead()
	case "s":
		switch {
		case m.selected() != nil && m.senderOf(m.selected()) == nil:
			m.note = "sending is off"
		case m.selected() == nil:
			m.note = "no session selected"
		default:
			m.mode = modeSend
			m.input.SetValue("")
			return m, m.input.Focus()
		}
	case "a":
		return m, m.askReply()
	case "/":
		m.mode = modeFilter
		m.input.SetValue(m.filter)
		m.input.CursorEnd()
		return m, m.input.Focus()
	case "esc":
		m.filter = ""
	case "?":
		m.mode = modeHelp
		m.read.top = 0
	}
	return m, nil
}

// selected is the selected session, or the first in the tree when the
// selected one is gone.
func (m *Model) selected() *session {
	if s := m.sessions[m.sel]; s != nil {
		return s
	}
	order := m.tree()
	if len(order) == 0 {
		return nil
	}
	m.sel = order[0].s.id
	return order[0].s
}

func (m *Model) move(d int) {
	m.selected()
	order := m.tree()
	if len(order) == 0 {
		return
	}
	cur := slices.IndexFunc(order, func(n node) bool { return n.s.id == m.sel })
	if cur < 0 {
		cur = 0
	} else {
		cur = min(max(cur+d, 0), len(order)-1)
	}
	m.sel = order[cur].s.id
}

func (m *Model) openRead() tea.Cmd {
	s := m.selected()
	if s == nil {
		m.note = "no session selected"
		return nil
	}
	if m.o.Exchanges == nil {
		m.note = "reading is off"
		return nil
	}
	m.mode = modeRead
	m.read.sid, m.read.text, m.read.err, m.read.top = s.id, "", nil, 0
	sid, stn, ex := s.id, s.station, m.o.Exchanges
	return func() tea.Msg {
		text, err := ex(stn, sid)
		return readMsg{sid: sid, text: text, err: err}
	}
}

// send starts sending line to the selected session.
func (m *Model) send(line string) tea.Cmd {
	s := m.selected()
	if s == nil || m.senderOf(s) == nil {
		return nil
	}
	if strings.TrimSpace(line) == "" {
		m.note = "nothing sent: the line is empty"
		return nil
	}
	s.send = &sendState{line: line}
	ctx, o, sid, cwd, snd, wit := m.ctx, m.o, s.id, s.cwd, m.senderOf(s), m.witnessOf(s)
	return func() tea.Msg {
		msg := sentMsg{sid: sid}
		if wit != nil {
			msg.path, msg.from, msg.markErr = wit.Mark(sid, cwd)
		}
		msg.v, msg.err = snd.Send(ctx, claudeinbox.Request{Target: sid, Line: line, From: o.From})
		return msg
	}
}

// askReply starts the wait for the reply to the line sent to the selected
// session.
func (m *Model) askReply() tea.Cmd {
	s := m.selected()
	switch {
	case s == nil || s.send == nil || !s.send.done:
		m.note = "no line sent to this session yet"
		return nil
	case !s.send.delivered():
		m.note = "the line was not delivered: no reply to wait for"
		return nil
	case m.witnessOf(s) == nil:
		m.note = "replies are off"
		if m.grouped() {
			m.note = "replies are off in a view of stations (send --host --reply waits for one)"
		}
		return nil
	case s.send.markErr != nil:
		m.note = "no reply: the transcript could not be marked: " + s.send.markErr.Error()
		return nil
	case s.send.asked:
		return nil
	}
	st := s.send
	st.asked = true
	ctx, w, sid, msgID, path, from, wait := m.ctx, m.witnessOf(s), s.id, st.msgID(), st.path, st.from, m.o.ReplyWait
	return func() tea.Msg {
		r, err := w.WaitReply(ctx, path, from, msgID, wait)
		return replyMsg{sid: sid, msgID: msgID, reply: r, err: err}
	}
}

// senderOf is the sender of a line to s: its station's when grouped.
func (m *Model) senderOf(s *session) Sender {
	if m.grouped() {
		return m.o.Senders[s.station]
	}
	return m.o.Sender
}

// witnessOf is the witness of s's transcript: none for a station's
// session (it reads this machine's files).
func (m *Model) witnessOf(*session) claudeinbox.ReplyWitness {
	if m.grouped() {
		return nil
	}
	return m.o.Witness
}

// parseTS reads an event's ts; the zero time when it does not parse.
func parseTS(ts string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return time.Time{}
	}
	return t
}
