package top

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/transcript"
)

// station200x10 is the benchmark station of BENCHMARKS.md: 200 sessions
// (every fourth a child of the one before), each with 10 riders, as the
// stream's initial events and the document.
func station200x10() ([]observatory.Event, *observatory.Document) {
	var evs []observatory.Event
	doc := &observatory.Document{}
	for i := range 200 {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		evs = append(evs,
			observatory.Event{Event: observatory.EventSessionStarted, TS: ts(0), Session: id, Initial: true, Name: fmt.Sprintf("work-%03d", i), PID: 1000 + i, Status: "busy"},
			observatory.Event{Event: observatory.EventDoorman, TS: ts(0), Session: id, Initial: true, Doorman: "up"})
		s := observatory.Session{Session: id, Name: fmt.Sprintf("work-%03d", i), StartedMS: clock.Add(-time.Hour).UnixMilli(),
			Inbox: observatory.Inbox{Pending: 3, LastLine: "[ops 📡] a line of some length to cut to the width of the screen"}}
		if i%4 != 0 {
			s.ParentSession = observatory.NullString(fmt.Sprintf("%08x-0000-4000-8000-%012x", i-1, i-1))
		}
		for r := range 10 {
			agent := fmt.Sprintf("%016x", i*10+r)
			evs = append(evs, observatory.Event{Event: observatory.EventRiderStarted, TS: ts(0), Session: id, Initial: true, Agent: agent, Description: "a rider's task"})
			s.Riders = append(s.Riders, transcript.Rider{Agent: agent, Description: "a rider's task", LastStep: "Bash: go test ./..."})
		}
		doc.Sessions = append(doc.Sessions, s)
	}
	return evs, doc
}

// BenchmarkFirstFrame200x10: the view opened on 200 sessions × 10 riders:
// the stream's initial events and the document folded in, the first
// frame drawn (160×50).
func BenchmarkFirstFrame200x10(b *testing.B) {
	evs, doc := station200x10()
	b.ReportAllocs()
	for b.Loop() {
		m := New(context.Background(), Options{Now: func() time.Time { return clock }, Tick: -1, UTF8: true})
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
		m.Update(eventsMsg{evs: evs})
		m.Update(docMsg{doc: doc})
		_ = m.View()
	}
}

// BenchmarkKeyFrame200x10: one key (j) on that view and the frame it
// draws.
func BenchmarkKeyFrame200x10(b *testing.B) {
	evs, doc := station200x10()
	m := New(context.Background(), Options{Now: func() time.Time { return clock }, Tick: -1, UTF8: true})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	m.Update(eventsMsg{evs: evs})
	m.Update(docMsg{doc: doc})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := "j"
		if i/150%2 == 1 {
			k = "k"
		}
		m.Update(key(k))
		_ = m.View()
	}
}
