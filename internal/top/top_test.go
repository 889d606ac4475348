package top

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The fake clock of every model test.
var clock = time.Date(2026, 12, 1, 20, 30, 0, 0, time.UTC)

const (
	idA = "aaaaaaaa-1111-4111-8111-111111111111"
	idB = "bbbbbbbb-2222-4222-8222-222222222222"
	idC = "cccccccc-3333-4333-8333-333333333333"
	msg = "dddddddd-4444-4444-8444-444444444444"
)

func ts(d time.Duration) string { return clock.Add(d).Format("2006-01-02T15:04:05.000Z") }

// newModel is a model at w×h on the fake clock, without the commands that
// wait for real time (the tick) or for a stream.
func newModel(t *testing.T, o Options, w, h int) *Model {
	t.Helper()
	o.Now = func() time.Time { return clock }
	o.Tick = -1
	m := New(context.Background(), o)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// station3 is three sessions: alpha (busy) with its child gamma (idle),
// and beta (waiting), as the stream and the document tell them.
func station3(m *Model) {
	m.Update(eventsMsg{evs: []observatory.Event{
		{Event: observatory.EventSessionStarted, TS: ts(0), Session: idA, Initial: true, Name: "alpha", PID: 101, Status: "busy"},
		{Event: observatory.EventDoorman, TS: ts(0), Session: idA, Initial: true, Doorman: "up"},
		{Event: observatory.EventSessionStarted, TS: ts(0), Session: idB, Initial: true, Name: "beta", PID: 102, Status: "waiting"},
		{Event: observatory.EventDoorman, TS: ts(0), Session: idB, Initial: true, Doorman: "not-fresh", Reason: "stale"},
		{Event: observatory.EventSessionStarted, TS: ts(0), Session: idC, Initial: true, Name: "gamma", PID: 103, Status: "idle"},
		{Event: observatory.EventDoorman, TS: ts(0), Session: idC, Initial: true, Doorman: "up"},
	}})
	m.Update(docMsg{doc: &observatory.Document{Sessions: []observatory.Session{
		{Session: idA, Name: "alpha", StartedMS: clock.Add(-90 * time.Minute).UnixMilli(), Inbox: inboxv1.Inbox{Pending: 2, LastLine: "[ops 📡] check the build"},
			Riders: []transcript.Rider{{Agent: "a1b2c3d4e5f60718", Description: "run the tests", LastStep: "Bash: go test ./..."}}},
		{Session: idB, Name: "beta", StartedMS: clock.Add(-3 * 24 * time.Hour).UnixMilli()},
		{Session: idC, Name: "gamma", StartedMS: clock.Add(-45 * time.Second).UnixMilli(), ParentSession: idA},
	}}})
}

// lines is the screen, one string a line, each checked against the size;
// the frame is on the alternate screen.
func lines(t *testing.T, m *Model) []string {
	t.Helper()
	f := m.View()
	if !f.AltScreen || f.MouseMode != tea.MouseModeNone || f.Cursor != nil {
		t.Errorf("the frame: alternate screen %v, mouse %v, cursor %v; want the alternate screen, no mouse, no cursor", f.AltScreen, f.MouseMode, f.Cursor)
	}
	v := f.Content
	ls := strings.Split(v, "\n")
	if len(ls) != m.h {
		t.Errorf("the view has %d lines, want the height %d:\n%s", len(ls), m.h, v)
	}
	for i, l := range ls {
		if w := ansi.StringWidth(l); w > m.w {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i, w, m.w, l)
		}
	}
	return ls
}

func lineWith(ls []string, sub string) (int, string) {
	for i, l := range ls {
		if strings.Contains(l, sub) {
			return i, l
		}
	}
	return -1, ""
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return tea.KeyPressMsg{Code: r, Text: s}
}

// run runs cmd (and the commands of a batch) and feeds what they return
// back to the model, as the program would.
func run(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			run(m, c)
		}
	case nil:
	default:
		if _, ok := msg.(tea.QuitMsg); ok {
			return
		}
		_, next := m.Update(msg)
		run(m, next)
	}
}

func TestTreeByLineage(t *testing.T) {
	m := newModel(t, Options{Station: "box", UTF8: true}, 120, 24)
	station3(m)
	ls := lines(t, m)
	if !strings.Contains(ls[0], "3 sessions: 1 busy, 1 idle, 1 waiting") || !strings.HasSuffix(ls[0], "20:30:00Z") {
		t.Errorf("header %q", ls[0])
	}
	ia, a := lineWith(ls, "alpha")
	ig, g := lineWith(ls, "gamma")
	ib, b := lineWith(ls, "beta")
	if !(ia < ig && ig < ib) {
		t.Fatalf("order alpha %d, gamma %d (its child), beta %d:\n%s", ia, ig, ib, strings.Join(ls, "\n"))
	}
	for _, want := range []string{"▶ alpha", "aaaaaaaa", "busy", "door up", "pend 2", " 1h ", `in "[ops 📡] check the build"`} {
		if !strings.Contains(a, want) {
			t.Errorf("alpha's line lacks %q: %q", want, a)
		}
	}
	if !strings.Contains(g, "└─ gamma") || !strings.Contains(g, "idle") || !strings.Contains(g, "45s") {
		t.Errorf("gamma's line: %q", g)
	}
	if !strings.Contains(b, "waiting") || !strings.Contains(b, "door not-fresh(stale)") || !strings.Contains(b, "3d") {
		t.Errorf("beta's line: %q", b)
	}
	if _, r := lineWith(ls, "↳ a1b2c3d4e5f60718 run the tests: Bash: go test ./..."); r == "" {
		t.Errorf("no rider line under alpha:\n%s", strings.Join(ls, "\n"))
	}

	// The stream moves the facts on: a status, a line, an answer, a rider.
	m.Update(eventsMsg{evs: []observatory.Event{
		{Event: observatory.EventStatus, TS: ts(time.Second), Session: idC, Status: "busy"},
		{Event: observatory.EventLineQueued, TS: ts(time.Second), Session: idC, Line: "[ops 📡] and now\x1b[2J this"},
		{Event: observatory.EventTurnEnded, TS: ts(2 * time.Second), Session: idA, Text: "All green."},
		{Event: observatory.EventRiderFinished, TS: ts(2 * time.Second), Session: idA, Agent: "a1b2c3d4e5f60718"},
		{Event: observatory.EventSessionEnded, TS: ts(3 * time.Second), Session: idB},
	}})
	ls = lines(t, m)
	if _, g := lineWith(ls, "gamma"); !strings.Contains(g, "busy") || !strings.Contains(g, "pend 1") || !strings.Contains(g, `in "[ops 📡] and now\x1b[2J this"`) {
		t.Errorf("gamma after the events (the escape shown, not obeyed): %q", g)
	}
	if _, a := lineWith(ls, "alpha"); !strings.Contains(a, `out "All green."`) {
		t.Errorf("alpha's answer out: %q", a)
	}
	if i, _ := lineWith(ls, "↳"); i >= 0 {
		t.Errorf("the finished rider is still shown")
	}
	if i, l := lineWith(ls, "  beta"); i >= 0 {
		t.Errorf("the ended session is still in the tree: %q", l)
	}
	if !strings.Contains(ls[0], "2 sessions: 2 busy, 0 idle, 0 waiting") {
		t.Errorf("header %q", ls[0])
	}
	// The event pane, newest last.
	if !strings.Contains(ls[len(ls)-2], "20:30:03 beta session-ended") {
		t.Errorf("newest event not last: %q", ls[len(ls)-2])
	}
}

func TestSelectAndFilter(t *testing.T) {
	m := newModel(t, Options{UTF8: true}, 100, 24)
	station3(m)
	sel := func() string { return m.selected().name }
	if sel() != "alpha" {
		t.Fatalf("first selected %q", sel())
	}
	for _, step := range []struct{ key, want string }{{"j", "gamma"}, {"down", "beta"}, {"j", "beta"}, {"k", "gamma"}, {"up", "alpha"}, {"k", "alpha"}, {"G", "beta"}, {"g", "alpha"}} {
		m.Update(key(step.key))
		if sel() != step.want {
			t.Fatalf("after %s: selected %q, want %q", step.key, sel(), step.want)
		}
	}
	m.Update(key("j"))
	if _, l := lineWith(lines(t, m), "gamma"); !strings.Contains(l, "▶") {
		t.Errorf("the cursor is not on gamma: %q", l)
	}

	// / filters the events by session.
	m.Update(key("/"))
	m.Update(key("bet"))
	ls := lines(t, m)
	if !strings.Contains(ls[len(ls)-1], "filter events by session") {
		t.Errorf("footer while filtering: %q", ls[len(ls)-1])
	}
	m.Update(key("enter"))
	ls = lines(t, m)
	i, _ := lineWith(ls, "── events of bet")
	if i < 0 {
		t.Fatalf("no filtered events title:\n%s", strings.Join(ls, "\n"))
	}
	for _, l := range ls[i+1 : len(ls)-1] {
		if l != "" && !strings.Contains(l, "beta") {
			t.Errorf("an event of another session passes the filter: %q", l)
		}
	}
	m.Update(key("esc"))
	if m.filter != "" {
		t.Errorf("esc leaves the filter %q", m.filter)
	}

	// ? shows the keys; q quits.
	m.Update(key("?"))
	if _, l := lineWith(lines(t, m), "the keys"); l == "" {
		t.Errorf("? shows no keys")
	}
	m.Update(key("esc"))
	if _, cmd := m.Update(key("q")); cmd == nil || cmd() != tea.Quit() {
		t.Errorf("q does not quit")
	}
	if _, cmd := m.Update(key("ctrl+c")); cmd == nil || cmd() != tea.Quit() {
		t.Errorf("ctrl+c does not quit")
	}
}

func TestEnterReads(t *testing.T) {
	var asked string
	m := newModel(t, Options{UTF8: true, Exchanges: func(_, sid string) (string, error) {
		asked = sid
		return "session " + sid + " gamma (running)\n\n── 2026-12-01 20:29:00Z  user\n> hi\n  hello\n  [end_turn]\n", nil
	}}, 80, 24)
	station3(m)
	m.Update(key("j"))
	_, cmd := m.Update(key("enter"))
	if _, l := lineWith(lines(t, m), "reading"); l == "" {
		t.Errorf("no reading mark before the text comes")
	}
	run(m, cmd)
	if asked != idC {
		t.Fatalf("read asked for %q, want gamma %q", asked, idC)
	}
	ls := lines(t, m)
	if !strings.HasPrefix(ls[0], "read gamma cccccccc") {
		t.Errorf("read title %q", ls[0])
	}
	if _, l := lineWith(ls, "> hi"); l == "" {
		t.Errorf("the exchange is not shown:\n%s", strings.Join(ls, "\n"))
	}
	m.Update(key("esc"))
	if m.mode != modeNormal {
		t.Errorf("esc does not go back")
	}
	m.o.Exchanges = func(string, string) (string, error) { return "", errors.New("no transcript for it") }
	_, cmd = m.Update(key("enter"))
	run(m, cmd)
	if _, l := lineWith(lines(t, m), "no transcript for it"); l == "" {
		t.Errorf("the read error is not shown")
	}
}

// fakeSender answers every send with its verdict and records the request.
type fakeSender struct {
	req claudeinbox.Request
	v   claudeinbox.Verdict
	err error
}

func (f *fakeSender) Send(_ context.Context, req claudeinbox.Request) (claudeinbox.Verdict, error) {
	f.req = req
	return f.v, f.err
}

// fakeWitness marks and replies as a transcript would.
type fakeWitness struct {
	marked string
	reply  *receipt.Reply
}

func (f *fakeWitness) Mark(sid, cwd string) (string, int64, error) {
	f.marked = sid
	return "/t/" + sid + ".jsonl", 42, nil
}

func (f *fakeWitness) WaitSeen(context.Context, string, int64, string, time.Duration) (bool, error) {
	return true, nil
}

func (f *fakeWitness) WaitReply(_ context.Context, path string, from int64, msgID string, _ time.Duration) (*receipt.Reply, error) {
	if path != "/t/"+idC+".jsonl" || from != 42 || msgID != msg {
		return nil, fmt.Errorf("WaitReply(%s, %d, %s): not the mark", path, from, msgID)
	}
	return f.reply, nil
}

func TestSendShowsTheVerdictInPlace(t *testing.T) {
	snd := &fakeSender{v: claudeinbox.Verdict{Class: claudeinbox.DeliveredStart, SessionID: idC, MsgID: msg, Confirm: inboxv1.ConfirmTranscript}}
	wit := &fakeWitness{reply: &receipt.Reply{Text: "Done: the build is green."}}
	m := newModel(t, Options{UTF8: true, Sender: snd, From: "ops", Witness: wit}, 120, 24)
	station3(m)
	m.Update(key("j")) // gamma
	m.Update(key("s"))
	m.Update(key("run the linter"))
	ls := lines(t, m)
	if !strings.Contains(ls[len(ls)-1], "send to gamma: run the linter") {
		t.Errorf("the line editor: %q", ls[len(ls)-1])
	}
	_, cmd := m.Update(key("enter"))
	if _, l := lineWith(lines(t, m), `» "run the linter" · sending…`); l == "" {
		t.Errorf("no sending mark under gamma:\n%s", strings.Join(lines(t, m), "\n"))
	}
	run(m, cmd)
	if snd.req != (claudeinbox.Request{Target: idC, Line: "run the linter", From: "ops"}) || wit.marked != idC {
		t.Fatalf("sent %+v, marked %q", snd.req, wit.marked)
	}
	ls = lines(t, m)
	ig, _ := lineWith(ls, "gamma")
	iv, v := lineWith(ls, "» ")
	if iv != ig+1 || !strings.Contains(v, `"run the linter" · delivered-start · confirmed · not seen yet · a: ask the reply`) {
		t.Errorf("the verdict is not in place under gamma (line %d): %q", ig, v)
	}
	// The stream sees the model take it.
	m.Update(eventsMsg{evs: []observatory.Event{{Event: observatory.EventLineSeen, TS: ts(time.Second), Session: idC, MsgID: msg}}})
	if _, v := lineWith(lines(t, m), "» "); !strings.Contains(v, "confirmed · seen · a: ask the reply") {
		t.Errorf("not seen after line-seen: %q", v)
	}
	_, cmd = m.Update(key("a"))
	if _, v := lineWith(lines(t, m), "» "); !strings.Contains(v, "waiting for the reply…") {
		t.Errorf("no waiting mark: %q", v)
	}
	run(m, cmd)
	if _, v := lineWith(lines(t, m), "» "); !strings.Contains(v, `seen · reply "Done: the build is green."`) {
		t.Errorf("no reply: %q", v)
	}
}

func TestSendRefusedAndSeenFirst(t *testing.T) {
	snd := &fakeSender{v: claudeinbox.Verdict{Class: claudeinbox.QueuedNoDoorman, Reason: "heartbeat-stale"}}
	m := newModel(t, Options{UTF8: true, Sender: snd}, 120, 24)
	station3(m)
	m.Update(key("G")) // beta
	m.Update(key("s"))
	m.Update(key("x"))
	_, cmd := m.Update(key("enter"))
	run(m, cmd)
	if _, v := lineWith(lines(t, m), "» "); !strings.Contains(v, `"x" · queued-no-doorman · heartbeat-stale`) || strings.Contains(v, "seen") {
		t.Errorf("a queued line: %q", v)
	}
	m.Update(key("a"))
	if !strings.Contains(m.note, "not delivered") {
		t.Errorf("a on an undelivered line: note %q", m.note)
	}
	// The stream may see the line before the sender returns.
	snd.v = claudeinbox.Verdict{Class: claudeinbox.DeliveredSteer, MsgID: msg, Confirm: inboxv1.ConfirmTranscript}
	m.Update(key("s"))
	m.Update(key("y"))
	_, cmd = m.Update(key("enter"))
	m.Update(eventsMsg{evs: []observatory.Event{{Event: observatory.EventLineSeen, TS: ts(time.Second), Session: idB, MsgID: msg}}})
	run(m, cmd)
	if _, v := lineWith(lines(t, m), "» "); !strings.Contains(v, "delivered-steer · confirmed · seen") {
		t.Errorf("seen before the verdict came: %q", v)
	}
	// An empty line is not sent; esc leaves the editor.
	snd.req = claudeinbox.Request{}
	m.Update(key("s"))
	_, cmd = m.Update(key("enter"))
	if cmd != nil || snd.req.Target != "" || !strings.Contains(m.note, "empty") {
		t.Errorf("an empty line: cmd %v, note %q", cmd != nil, m.note)
	}
	m.Update(key("s"))
	m.Update(key("esc"))
	if m.mode != modeNormal {
		t.Errorf("esc leaves the editor open")
	}
	// Without a sender, s says so.
	m.o.Sender = nil
	m.Update(key("s"))
	if m.mode != modeNormal || m.note != "sending is off" {
		t.Errorf("s without a sender: mode %d note %q", m.mode, m.note)
	}
}

// TestSizes: at every size the view fills the height and no line is wider
// than the width; without UTF-8 it is ASCII only.
func TestSizes(t *testing.T) {
	for _, utf := range []bool{true, false} {
		for _, sz := range [][2]int{{80, 24}, {160, 50}, {40, 10}, {20, 5}, {1, 1}} {
			m := newModel(t, Options{UTF8: utf, Station: "box"}, sz[0], sz[1])
			station3(m)
			for i := range 30 {
				m.Update(eventsMsg{evs: []observatory.Event{{Event: observatory.EventLineQueued, TS: ts(time.Duration(i) * time.Second), Session: idA, Line: strings.Repeat("long line ", 30)}}})
			}
			ls := lines(t, m)
			if !utf {
				for _, l := range ls {
					if !isASCII(l) {
						t.Errorf("%dx%d without UTF-8: %q", sz[0], sz[1], l)
					}
				}
			}
			if sz[0] == 80 && !utf {
				if _, g := lineWith(ls, "gamma"); !strings.Contains(g, "`- gamma") {
					t.Errorf("no ASCII tree glyph: %q", g)
				}
			}
		}
	}
	if !utf8.ValidString(newModel(t, Options{UTF8: true}, 80, 24).screen()) {
		t.Errorf("the view is not UTF-8")
	}
}

// TestScrollsToTheSelection: with more sessions than rows the selected one
// stays on the screen.
func TestScrollsToTheSelection(t *testing.T) {
	m := newModel(t, Options{UTF8: true}, 80, 24)
	var evs []observatory.Event
	for i := range 60 {
		evs = append(evs, observatory.Event{Event: observatory.EventSessionStarted, TS: ts(0), Session: fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), Initial: true, Name: fmt.Sprintf("s%02d", i), Status: "idle"})
	}
	m.Update(eventsMsg{evs: evs})
	for range 40 {
		m.Update(key("j"))
	}
	if _, l := lineWith(lines(t, m), "▶ s40"); l == "" {
		t.Errorf("the selection s40 is not on the screen:\n%s", strings.Join(lines(t, m), "\n"))
	}
}

// TestOverflowStartsAgain: after an overflow the station as it is
// replaces what the view held.
func TestOverflowStartsAgain(t *testing.T) {
	m := newModel(t, Options{UTF8: true}, 100, 24)
	station3(m)
	m.Update(eventsMsg{evs: []observatory.Event{
		{Event: observatory.EventOverflow, TS: ts(time.Second), Dropped: 12000},
		{Event: observatory.EventSessionStarted, TS: ts(time.Second), Session: idA, Initial: true, Name: "alpha", Status: "idle"},
	}})
	ls := lines(t, m)
	if _, l := lineWith(ls, "beta "); strings.Contains(l, "door") {
		t.Errorf("beta, gone meanwhile, is still shown: %q", l)
	}
	if !strings.Contains(ls[0], "1 sessions: 0 busy, 1 idle") {
		t.Errorf("header %q", ls[0])
	}
}

// TestOnAFakeStation: the real stream and document of a fake station,
// folded into the view.
func TestOnAFakeStation(t *testing.T) {
	fs := fakestation.New(t)
	parent := fs.AddSession(fakestation.Session{Name: "lead", Status: station.StatusBusy})
	fs.AddSession(fakestation.Session{Name: "helper", Status: station.StatusIdle})
	st := fs.Station()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := observatory.Watch(ctx, observatory.WatchOptions{Station: st, Liveness: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(t, Options{UTF8: true, Events: ch, Document: func(ctx context.Context, _, only string) (*observatory.Document, error) {
		return observatory.Build(ctx, observatory.Options{Station: st, Only: only, Hostname: func() (string, error) { return "box", nil }})
	}}, 120, 30)
	// The initial events: two sessions and their doormen.
	for got := 0; got < 4; {
		msg := m.nextEvents()().(eventsMsg)
		got += len(msg.evs)
		m.Update(msg)
	}
	run(m, m.loadDoc("", ""))
	ls := lines(t, m)
	if _, l := lineWith(ls, "lead"); !strings.Contains(l, "busy") || !strings.Contains(l, parent.SessionID[:8]) {
		t.Errorf("lead: %q", l)
	}
	if _, l := lineWith(ls, "helper"); !strings.Contains(l, "idle") {
		t.Errorf("helper: %q", l)
	}
	fs.SetStatus(parent.PID, station.StatusIdle)
	for {
		msg := m.nextEvents()().(eventsMsg)
		m.Update(msg)
		if _, l := lineWith(lines(t, m), "lead"); strings.Contains(l, "idle") {
			break
		}
	}
	cancel()
	for range ch {
	}
}

// TestDocumentBeforeTheStream: a document that comes before the stream has
// named its sessions is kept for them (the document of the station is
// asked for when the view opens, at the same time as the first events).
func TestDocumentBeforeTheStream(t *testing.T) {
	m := newModel(t, Options{UTF8: true}, 100, 24)
	m.Update(docMsg{doc: &observatory.Document{Sessions: []observatory.Session{
		{Session: idA, Name: "alpha", StartedMS: clock.Add(-3 * time.Hour).UnixMilli(), Inbox: inboxv1.Inbox{Pending: 4}},
		{Session: idC, Name: "gamma", ParentSession: idA},
	}}})
	if len(m.sessions) != 0 {
		t.Fatalf("the document alone put sessions in the view")
	}
	m.Update(eventsMsg{evs: []observatory.Event{
		{Event: observatory.EventSessionStarted, TS: ts(0), Session: idA, Initial: true, Name: "alpha", Status: "busy"},
		{Event: observatory.EventSessionStarted, TS: ts(0), Session: idC, Initial: true, Name: "gamma", Status: "idle"},
	}})
	ls := lines(t, m)
	if _, a := lineWith(ls, "alpha"); !strings.Contains(a, "pend 4") || !strings.Contains(a, " 3h") {
		t.Errorf("alpha without its document: %q", a)
	}
	if _, g := lineWith(ls, "gamma"); !strings.Contains(g, "└─ gamma") {
		t.Errorf("gamma not under its parent: %q", g)
	}
}

// TestLateAck: a line whose verdict is timeout (the doorman acked after
// the sender's wait) shows the ack the stream saw, matched by its offset,
// and can then be asked for its reply.
func TestLateAck(t *testing.T) {
	snd := &fakeSender{v: claudeinbox.Verdict{Class: claudeinbox.Timeout, Written: true, LineOffset: 120}}
	wit := &fakeWitness{reply: &receipt.Reply{Text: "late but here"}}
	m := newModel(t, Options{UTF8: true, Sender: snd, Witness: wit}, 160, 24)
	station3(m)
	m.Update(key("j")) // gamma
	m.Update(key("s"))
	m.Update(key("hi"))
	_, cmd := m.Update(key("enter"))
	run(m, cmd)
	if _, v := lineWith(lines(t, m), "» "); !strings.Contains(v, `"hi" · timeout`) || strings.Contains(v, "then") {
		t.Errorf("the timeout verdict: %q", v)
	}
	other, mine := int64(7), int64(120)
	m.Update(eventsMsg{evs: []observatory.Event{
		{Event: observatory.EventLineSeen, TS: ts(time.Second), Session: idC, MsgID: msg},
		{Event: observatory.EventLineDelivered, TS: ts(time.Second), Session: idC, MsgID: "eeeeeeee-5555-4555-8555-555555555555", Class: "delivered-start", LineOffset: &other},
	}})
	if _, v := lineWith(lines(t, m), "» "); strings.Contains(v, "then") {
		t.Errorf("another line's ack taken for this one: %q", v)
	}
	m.Update(eventsMsg{evs: []observatory.Event{
		{Event: observatory.EventLineDelivered, TS: ts(time.Second), Session: idC, MsgID: msg, Class: "delivered-start", LineOffset: &mine},
	}})
	if _, v := lineWith(lines(t, m), "» "); !strings.Contains(v, "timeout · then delivered-start (the doorman acked it after the wait) · seen") {
		t.Errorf("the late ack: %q", v)
	}
	_, cmd = m.Update(key("a"))
	run(m, cmd)
	if _, v := lineWith(lines(t, m), "» "); !strings.Contains(v, `reply "late but here"`) {
		t.Errorf("the reply to a late-acked line: %q", v)
	}
}

// TestPasteAndSpace: a paste (bracketed, bubbletea v2's PasteMsg) goes
// into the open editor; the space bar (v2's "space") pages down.
func TestPasteAndSpace(t *testing.T) {
	m := newModel(t, Options{UTF8: true}, 80, 24)
	station3(m)
	m.Update(tea.PasteMsg{Content: "alpha"}) // no editor open: nothing happens
	m.Update(key("/"))
	m.Update(tea.PasteMsg{Content: "bet"})
	m.Update(key("enter"))
	if m.filter != "bet" {
		t.Errorf("the pasted filter is %q, want %q", m.filter, "bet")
	}
	m.Update(key("?"))
	m.Update(key(" "))
	if m.read.top != m.h-2 {
		t.Errorf("space scrolled to %d, want a page (%d)", m.read.top, m.h-2)
	}
}
