package observatory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// A station with one running session (this process, registered the way
// Claude Code registers itself) whose inbox holds two lines and no doorman.
func ExampleBuild() {
	root, err := os.MkdirTemp("", "observatory-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	paths := station.Paths{
		SessionsDir:    filepath.Join(root, "sessions"),
		ProjectsDir:    filepath.Join(root, "projects"),
		InboxDir:       filepath.Join(root, "inbox"),
		ObservatoryDir: filepath.Join(root, "observatory"),
	}
	const sid = "0e0e0e0e-0000-4000-8000-000000000001"
	self, err := station.Proc{}.Info(os.Getpid())
	if err != nil {
		panic(err)
	}
	row, _ := json.Marshal(station.Row{
		PID: os.Getpid(), SessionID: sid, CWD: root, StartedAt: 1796065828540,
		ProcStart: self.StartTicks, Name: "demo", Status: station.StatusBusy,
	})
	os.MkdirAll(paths.SessionsDir, 0o700)
	os.WriteFile(filepath.Join(paths.SessionsDir, strconv.Itoa(os.Getpid())+".json"), row, 0o600)
	os.MkdirAll(paths.InboxDir, 0o700)
	os.WriteFile(filepath.Join(paths.InboxDir, sid+".inbox"), []byte("[mama 📡] hello\n[mama 📡] again\n"), 0o600)

	doc, err := observatory.Build(context.Background(), observatory.Options{Station: station.New(paths)})
	if err != nil {
		panic(err)
	}
	s := doc.Sessions[0]
	fmt.Println(doc.Schema)
	fmt.Println(s.Name, s.Status, s.Inbox.Pending, s.Inbox.PendingSource, s.Inbox.Doorman == nil)
	// Output:
	// oo-claude/sessions/v0
	// demo busy 2 lines-acks true
}

// Watch a station: a session is already running (this process), then a
// line is appended to its inbox. The stream reports the session, its
// doorman's state (no heartbeat: not fresh) and the line.
func ExampleWatch() {
	root, err := os.MkdirTemp("", "observatory-watch-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	paths := station.Paths{
		SessionsDir: filepath.Join(root, "sessions"),
		ProjectsDir: filepath.Join(root, "projects"),
		InboxDir:    filepath.Join(root, "inbox"),
	}
	for _, d := range []string{paths.SessionsDir, paths.ProjectsDir, paths.InboxDir} {
		os.MkdirAll(d, 0o700)
	}
	const sid = "0e0e0e0e-0000-4000-8000-000000000002"
	self, err := station.Proc{}.Info(os.Getpid())
	if err != nil {
		panic(err)
	}
	row, _ := json.Marshal(station.Row{PID: os.Getpid(), SessionID: sid, CWD: root, ProcStart: self.StartTicks, Name: "demo", Status: station.StatusIdle})
	os.WriteFile(filepath.Join(paths.SessionsDir, strconv.Itoa(os.Getpid())+".json"), row, 0o600)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := observatory.Watch(ctx, observatory.WatchOptions{Station: station.New(paths)})
	if err != nil {
		panic(err)
	}
	for e := range events {
		fmt.Println(strings.TrimSpace(fmt.Sprintln(e.Event, e.Name, e.Doorman, e.Reason, e.Line)))
		switch e.Event {
		case observatory.EventDoorman:
			f, _ := os.OpenFile(filepath.Join(paths.InboxDir, sid+".inbox"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			f.WriteString("[mama 📡] hello\n")
			f.Close()
		case observatory.EventLineQueued:
			cancel()
		}
	}
	// Output:
	// session-started demo
	// doorman  not-fresh missing
	// line-queued    [mama 📡] hello
}

// GC on a station where one finished session left an empty inbox a month
// ago and another still has a line waiting.
func ExampleGC() {
	root, err := os.MkdirTemp("", "gc-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	paths := station.Paths{SessionsDir: filepath.Join(root, "sessions"), InboxDir: filepath.Join(root, "inbox")}
	os.MkdirAll(paths.InboxDir, 0o700)
	const gone, waiting = "0e0e0e0e-0000-4000-8000-00000000000a", "0e0e0e0e-0000-4000-8000-00000000000b"
	os.WriteFile(filepath.Join(paths.InboxDir, gone+".inbox"), nil, 0o600)
	os.WriteFile(filepath.Join(paths.InboxDir, waiting+".inbox"), []byte("[mama 📡] still there?\n"), 0o600)
	month := time.Now().Add(-30 * 24 * time.Hour)
	for _, sid := range []string{gone, waiting} {
		os.Chtimes(filepath.Join(paths.InboxDir, sid+".inbox"), month, month)
	}

	items, err := observatory.GC(context.Background(), observatory.GCOptions{Station: station.New(paths)})
	if err != nil {
		panic(err)
	}
	for _, it := range items {
		fmt.Println(it.Session[len(it.Session)-1:], it.Why, len(it.Files), "file(s)")
	}
	// Output:
	// a removed 1 file(s)
	// b pending 0 file(s)
}
