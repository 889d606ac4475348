package doorman_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// procTree is a fake procfs: stat lines and exe links under a temp dir.
type procTree struct {
	t    testing.TB
	root string
}

func newProcTree(t testing.TB) *procTree {
	return &procTree{t: t, root: t.TempDir()}
}

// add writes a process: pid, its parent, its comm and exe, start ticks.
func (p *procTree) add(pid, ppid int, comm, exe, start string) {
	p.t.Helper()
	dir := filepath.Join(p.root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		p.t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (%s) S %d%s %s 0 0\n", pid, comm, ppid, strings.Repeat(" 0", 17), start)
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o600); err != nil {
		p.t.Fatal(err)
	}
	if exe != "" {
		if err := os.Symlink(exe, filepath.Join(dir, "exe")); err != nil {
			p.t.Fatal(err)
		}
	}
}

func (p *procTree) proc() station.Proc { return station.Proc{Root: p.root} }

// stubDoor answers Peer with a fixed pid and records deliveries.
type stubDoor struct {
	mu        sync.Mutex
	peer      int
	peerErr   error
	delivered []door.Message
	// transcript, when set, gets the receiver's enqueue row of each
	// delivery, as the real receiver writes it.
	transcript string
}

func (s *stubDoor) Peer(ctx context.Context, socket string) (int, error) { return s.peer, s.peerErr }

func (s *stubDoor) Deliver(ctx context.Context, socket string, expect int, m door.Message, _ bool) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if expect != 0 && expect != s.peer {
		return s.peer, &door.PeerMismatchError{Socket: socket, Want: expect, Got: s.peer}
	}
	s.delivered = append(s.delivered, m)
	if s.transcript != "" {
		row, _ := json.Marshal(map[string]string{"type": "queue-operation", "operation": "enqueue",
			"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "content": m.Text})
		if _, err := fsx.AppendLine(s.transcript, row); err != nil {
			return s.peer, err
		}
	}
	return s.peer, nil
}

// enqueueTimes returns the timestamps of the transcript's enqueue rows by
// content.
func enqueueTimes(t testing.TB, path string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		row, err := transcriptfile.ParseRow([]byte(l))
		if err != nil || row.Type != transcriptfile.RowQueueOperation || row.Operation != transcriptfile.QueueEnqueue {
			continue
		}
		var c string
		json.Unmarshal(row.Content, &c)
		out[c] = append(out[c], row.Timestamp)
	}
	return out
}

// world is one hermetic machine: a fake procfs, a fake station, a real fake
// door listening in this test process, and the doorman's host.
type world struct {
	t     testing.TB
	tree  *procTree
	fs    *fakestation.Station
	st    *station.Station
	door  *fakedoor.Door
	env   map[string]string
	self  int
	ppid  int
	me    int // this test process: the door's listener
	row   station.Row
	clock func() time.Time
	// sid is the id the next owned session gets, and transcript its
	// transcript, where the fake door writes the receiver's enqueue rows.
	sid        string
	transcript string
}

const selfPID = 4100001

func newWorld(t testing.TB) *world {
	w := &world{t: t, tree: newProcTree(t), fs: fakestation.New(t), env: map[string]string{}, me: os.Getpid(), sid: uuid.NewString()}
	w.transcript = filepath.Join(w.fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(worldCWD), w.sid+transcriptfile.Ext)
	w.door = w.newDoor(fakedoor.Options{})
	w.st = &station.Station{Paths: w.fs.Paths, Proc: w.tree.proc()}
	w.tree.add(1, 0, "init", "/sbin/init", "1")
	return w
}

// worldCWD is the cwd of the world's sessions.
const worldCWD = "/home/u/proj"

// newDoor starts a fake door that records the receiver's enqueue rows in
// the transcript of the world's owned session.
func (w *world) newDoor(o fakedoor.Options) *fakedoor.Door {
	o.Transcript = w.transcript
	return fakedoor.New(w.t, o)
}

// session writes a live registry row for pid (present in the fake procfs
// with start "777") whose socket is the fake door. The first one of pid
// w.me takes the world's session id.
func (w *world) session(pid int, status string) station.Row {
	sid := ""
	if pid == w.me && w.sid != "" {
		sid, w.sid = w.sid, ""
	}
	return w.fs.AddSession(fakestation.Session{PID: pid, ProcStart: "777", Socket: w.door.Path(), Status: status, SessionID: sid, CWD: worldCWD})
}

func (w *world) host(d doorman.Door) *doorman.Host {
	if d == nil {
		d = doorman.DoorDialer{Settle: door.NoSettle} // the knob's 0, as config() says
	}
	return &doorman.Host{
		Proc: w.tree.proc(), Station: w.st, Getenv: func(k string) string { return w.env[k] },
		PID: w.self, PPID: w.ppid, Door: d, Now: w.clock,
	}
}

func (w *world) config() station.Config {
	c := station.DefaultConfig(w.fs.Paths)
	c.DoorSettle = 0
	return c
}

// runOnce runs a doorman with --once semantics and returns its error, its
// status and its log.
//
//lint:ignore ST1008 the error first: every caller tests it before the rest
func (w *world) runOnce(mode doorman.Mode, session string, d doorman.Door) (error, doorman.Status, string) {
	var log bytes.Buffer
	dm := doorman.New(doorman.Options{Host: w.host(d), Config: w.config(), Mode: mode, Session: session, Once: true, Log: &log, Version: "test"})
	err := dm.Run(context.Background())
	return err, dm.Status(), log.String()
}

// inboxEntries lists the inbox directory.
func (w *world) inboxEntries() []string {
	ents, err := os.ReadDir(w.fs.Paths.InboxDir)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func (w *world) appendLine(sid, line string) int64 {
	w.t.Helper()
	path := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid).Inbox
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if _, err := f.WriteString(line + "\n"); err != nil {
		w.t.Fatal(err)
	}
	return fi.Size()
}

func readAcks(t testing.TB, path string) []inboxv1.Ack {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	var out []inboxv1.Ack
	inbox.ScanAcks(f, 0, func(a inboxv1.Ack, _ int64) bool { out = append(out, a); return true })
	return out
}
