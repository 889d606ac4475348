package top

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/observatory"
)

// twoStations is a grouped view of stations a and b, fed as fleet.Watch
// and fleet.MergeSessions feed it: alpha (busy) on a, beta (idle) and its
// child gamma on b.
func twoStations(t *testing.T, o Options) *Model {
	t.Helper()
	o.UTF8, o.Stations = true, []string{"a", "b"}
	m := newModel(t, o, 120, 30)
	m.Update(eventsMsg{evs: []observatory.Event{
		{Event: observatory.EventSessionStarted, TS: ts(0), Station: "a", Session: idA, Initial: true, Name: "alpha", Status: "busy"},
		{Event: observatory.EventSessionStarted, TS: ts(0), Station: "b", Session: idB, Initial: true, Name: "beta", Status: "idle"},
		{Event: observatory.EventSessionStarted, TS: ts(0), Station: "b", Session: idC, Initial: true, Name: "gamma", Status: "idle"},
	}})
	m.Update(docMsg{doc: &observatory.Document{
		Stations: []observatory.StationState{{Station: "a", Name: "a-station"}, {Station: "b", Name: "b-station"}},
		Sessions: []observatory.Session{
			{Session: idA, Station: "a", Name: "alpha"},
			{Session: idB, Station: "b", Name: "beta"},
			{Session: idC, Station: "b", Name: "gamma", ParentSession: idB},
		}}})
	return m
}

// TestStationsGrouped: each station's sessions under its header, in the
// order of the --host flags, lineage within a station; the events name
// their station.
func TestStationsGrouped(t *testing.T) {
	m := twoStations(t, Options{})
	ls := lines(t, m)
	ha, la := lineWith(ls, "[a]")
	hb, lb := lineWith(ls, "[b]")
	ia, _ := lineWith(ls, "alpha ")
	ib, _ := lineWith(ls, "beta ")
	ic, lc := lineWith(ls, "gamma ")
	if ha < 0 || hb < 0 || !(ha < ia && ia < hb && hb < ib && ib < ic) {
		t.Fatalf("not grouped (a %d alpha %d b %d beta %d gamma %d):\n%s", ha, ia, hb, ib, ic, strings.Join(ls, "\n"))
	}
	if !strings.Contains(la, "a-station · 1 sessions") || !strings.Contains(lb, "b-station · 2 sessions") {
		t.Errorf("headers %q %q", la, lb)
	}
	if !strings.Contains(lc, "└─ gamma") {
		t.Errorf("gamma is not beta's child: %q", lc)
	}
	if _, l := lineWith(ls, "session-started"); !strings.Contains(l, " a alpha session-started") {
		t.Errorf("the event does not name its station: %q", l)
	}
}

// TestStationLostAndBack: a lost station says so in its header, keeps its
// sessions while lost, and on station-back shows the station as it is
// (its initial events), its document asked again for it alone.
func TestStationLostAndBack(t *testing.T) {
	var asked []string
	m := twoStations(t, Options{Document: func(_ context.Context, station, only string) (*observatory.Document, error) {
		asked = append(asked, station+"/"+only)
		return &observatory.Document{Stations: []observatory.StationState{{Station: station, Name: station + "-station"}}}, nil
	}})
	m.Update(eventsMsg{evs: []observatory.Event{{Event: eventStationLost, TS: ts(time.Second), Station: "b", Text: "ssh b: exit 255"}}})
	ls := lines(t, m)
	if _, l := lineWith(ls, "[b]"); !strings.Contains(l, "LOST: ssh b: exit 255 (reconnecting)") {
		t.Errorf("b's header while lost: %q", l)
	}
	if _, l := lineWith(ls, "[a]"); strings.Contains(l, "LOST") {
		t.Errorf("a's header: %q", l)
	}
	if _, l := lineWith(ls, "station-lost"); !strings.Contains(l, " b station-lost") {
		t.Errorf("the lost event: %q", l)
	}
	// Back: gamma ended meanwhile; beta is there.
	_, cmd := m.Update(eventsMsg{evs: []observatory.Event{
		{Event: eventStationBack, TS: ts(2 * time.Second), Station: "b"},
		{Event: observatory.EventSessionStarted, TS: ts(2 * time.Second), Station: "b", Session: idB, Initial: true, Name: "beta", Status: "busy"},
	}})
	run(m, cmd)
	ls = lines(t, m)
	if _, l := lineWith(ls, "[b]"); strings.Contains(l, "LOST") || !strings.Contains(l, "1 sessions") {
		t.Errorf("b's header once back: %q", l)
	}
	if _, l := lineWith(ls, "gamma "); strings.Contains(l, " door ") {
		t.Errorf("gamma, ended while b was lost, is still shown: %q", l)
	}
	if _, l := lineWith(ls, "alpha "); !strings.Contains(l, "busy") {
		t.Errorf("a's alpha was dropped: %q", l)
	}
	if len(asked) != 1 || asked[0] != "b/" {
		t.Errorf("documents asked %q, want b's alone", asked)
	}
}

// TestStationsSendAndRead: s sends through the selected session's
// station's sender (and no witness: it reads this machine's files), enter
// reads from its station.
func TestStationsSendAndRead(t *testing.T) {
	sa := &fakeSender{v: claudeinbox.Verdict{Class: claudeinbox.DeliveredStart, SessionID: idA, MsgID: msg}}
	sb := &fakeSender{v: claudeinbox.Verdict{Class: claudeinbox.DeliveredSteer, SessionID: idB, MsgID: msg}}
	wit := &fakeWitness{}
	var read string
	m := twoStations(t, Options{Senders: map[string]Sender{"a": sa, "b": sb}, Witness: wit, From: "ops",
		Exchanges: func(station, sid string) (string, error) { read = station + "/" + sid; return "the exchanges", nil }})
	m.Update(key("j")) // beta, on b
	m.Update(key("s"))
	m.Update(key("hello b"))
	_, cmd := m.Update(key("enter"))
	run(m, cmd)
	if sb.req != (claudeinbox.Request{Target: idB, Line: "hello b", From: "ops"}) || sa.req.Line != "" || wit.marked != "" {
		t.Fatalf("b got %+v, a got %+v, marked %q", sb.req, sa.req, wit.marked)
	}
	ls := lines(t, m)
	ib, _ := lineWith(ls, "beta ")
	iv, v := lineWith(ls, "» ")
	if iv != ib+1 || !strings.Contains(v, `"hello b" · delivered-steer`) {
		t.Errorf("the verdict is not under beta (%d): %q", ib, v)
	}
	m.Update(key("a"))
	if !strings.Contains(lines(t, m)[29], "replies are off in a view of stations") {
		t.Errorf("a: %q", lines(t, m)[29])
	}
	_, cmd = m.Update(key("enter"))
	run(m, cmd)
	if read != "b/"+idB {
		t.Errorf("enter read %q, want b's beta", read)
	}
	// A station without a sender: s says so.
	m.Update(key("esc"))
	m.o.Senders = map[string]Sender{"b": sb}
	m.Update(key("k")) // alpha, on a
	m.Update(key("s"))
	if m.mode == modeSend || !strings.Contains(lines(t, m)[29], "sending is off") {
		t.Errorf("s on a station without a sender: mode %v, %q", m.mode, lines(t, m)[29])
	}
}
