// Package fakestation is a Claude Code station in a temporary directory, for
// tests of oo-claude and of programs that use it.
//
// A [Station] lays out the directories the knobs name (config with its
// sessions and projects, inbox, state, observatory) under one root and writes
// registry rows exactly as the real Claude Code writes them: for a live pid,
// with that process's real procStart from /proc, so the station's liveness
// check runs unmodified. Env and Getenv hand the knobs to code under test.
//
// A station holds any number of live sessions at once. A [Session] without a
// PID gets a process of its own: a child that sleeps until the session is
// removed ([Station.RemoveSession], [Station.Crash]) or the station is
// closed ([Station.Close], also at the end of the test). Two sessions never
// share a registry row: adding one for a pid that already has a row fails
// the test instead of replacing the first.
package fakestation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes"
	"github.com/oo-family/oo-claude/fakes/internal/fakerow"
	"github.com/oo-family/oo-claude/fakes/internal/fakewait"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// Station is a fake station rooted in a temporary directory. Make one
// with [New]: a Station not made by it (the zero value) has no
// directory, so its writers (AddSession, WriteRow, WriteKey, SetStatus,
// RemoveSession, Crash, AddTranscript) do nothing; a nil one does nothing
// too, and its readers (Getenv, Env, InboxPath, Station) answer "" and nil.
type Station struct {
	Root  string
	Paths station.Paths
	tb    fakes.TB

	mu    sync.Mutex
	procs map[int]*exec.Cmd // the session processes the fake owns, by pid
}

// New lays out a station under tb.TempDir(). Every directory is 0700. The
// station is closed at tb's cleanup (the end of the test).
func New(tb fakes.TB) *Station {
	tb.Helper()
	root := tb.TempDir()
	cfg := filepath.Join(root, "claude")
	p := station.Paths{
		ConfigDir:      cfg,
		SessionsDir:    filepath.Join(cfg, "sessions"),
		ProjectsDir:    filepath.Join(cfg, "projects"),
		InboxDir:       filepath.Join(root, "inbox"),
		StateDir:       filepath.Join(root, "state"),
		ObservatoryDir: filepath.Join(root, "observatory"),
	}
	for _, d := range []string{cfg, p.SessionsDir, p.ProjectsDir, p.InboxDir, p.StateDir, p.ObservatoryDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatalf("fakestation: %v", err)
		}
	}
	s := &Station{Root: root, Paths: p, tb: tb, procs: map[int]*exec.Cmd{}}
	tb.Cleanup(s.Close)
	return s
}

// Close stops every session process the fake owns and waits for each, so
// none is left behind (the registry rows stay, as after a crash). It is safe
// to call more than once.
func (s *Station) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	procs := s.procs
	s.procs = map[int]*exec.Cmd{}
	s.mu.Unlock()
	for _, c := range procs {
		stop(c)
	}
}

func stop(c *exec.Cmd) {
	if c.SysProcAttr != nil && c.SysProcAttr.Setpgid {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL) // its children too
	}
	c.Process.Kill()
	c.Wait()
}

// spawnWithDoorman starts a session process whose child holds lock open,
// in a process group of its own (stopped as one), and returns the
// session process's pid once the child holds the file.
func (s *Station) spawnWithDoorman(lock string) int {
	s.tb.Helper()
	if err := os.MkdirAll(filepath.Dir(lock), 0o700); err != nil {
		s.tb.Fatalf("fakestation: %v", err)
	}
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		s.tb.Fatalf("fakestation: %v", err)
	}
	c := exec.Command("sh", "-c", `sleep 86400 3<"$0" & wait`, lock)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		s.tb.Fatalf("fakestation: starting a session process: %v", err)
	}
	s.mu.Lock()
	s.procs[c.Process.Pid] = c
	s.mu.Unlock()
	real, err := filepath.EvalSymlinks(lock) // the kernel names it so
	if err != nil {
		s.tb.Fatalf("fakestation: %v", err)
	}
	// Another process opens it: looked for in /proc every 2 ms.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fakewait.Until(ctx, nil, 2*time.Millisecond, nil, nil, func() bool { return childHolds(c.Process.Pid, real) }); err != nil {
		s.tb.Fatalf("fakestation: the doorman child of pid %d did not open %s within 30 s", c.Process.Pid, lock)
	}
	return c.Process.Pid
}

// childHolds reports whether a child of pid has path open.
func childHolds(pid int, path string) bool {
	p := station.Proc{}
	kids, _ := p.Children(pid)
	for _, k := range kids {
		files, _ := p.OpenFiles(k)
		for _, f := range files {
			if f == path {
				return true
			}
		}
	}
	return false
}

// spawn starts a process for a session: a child that sleeps until the fake
// stops it.
func (s *Station) spawn() int {
	s.tb.Helper()
	c := exec.Command("sleep", "86400")
	if err := c.Start(); err != nil {
		s.tb.Fatalf("fakestation: starting a session process: %v", err)
	}
	s.mu.Lock()
	s.procs[c.Process.Pid] = c
	s.mu.Unlock()
	return c.Process.Pid
}

// release stops the process of pid when the fake owns it.
func (s *Station) release(pid int) {
	s.mu.Lock()
	c := s.procs[pid]
	delete(s.procs, pid)
	s.mu.Unlock()
	if c != nil {
		stop(c)
	}
}

// Station returns a station.Station over the fake's paths and the real /proc.
func (s *Station) Station() *station.Station {
	if s == nil {
		return nil
	}
	return station.New(s.Paths)
}

// made reports whether s was made by New.
func (s *Station) made() bool { return s != nil && s.tb != nil }

// Getenv answers the knobs that point at the fake, then HOME (the root), and
// "" for everything else. Pass it where code takes a getenv seam.
func (s *Station) Getenv(key string) string {
	if s == nil {
		return ""
	}
	switch key {
	case "HOME":
		return s.Root
	case "CLAUDE_CONFIG_DIR":
		return s.Paths.ConfigDir
	case "OO_CLAUDE_SESSIONS_DIR":
		return s.Paths.SessionsDir
	case "OO_CLAUDE_PROJECTS_DIR":
		return s.Paths.ProjectsDir
	case "OO_CLAUDE_INBOX_DIR":
		return s.Paths.InboxDir
	case "OO_CLAUDE_STATE_DIR":
		return s.Paths.StateDir
	case "OO_CLAUDE_OBSERVATORY_DIR":
		return s.Paths.ObservatoryDir
	}
	return ""
}

// Env returns the knobs as KEY=VALUE pairs, to append to a child's
// environment.
func (s *Station) Env() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, k := range []string{"HOME", "CLAUDE_CONFIG_DIR", "OO_CLAUDE_SESSIONS_DIR", "OO_CLAUDE_PROJECTS_DIR",
		"OO_CLAUDE_INBOX_DIR", "OO_CLAUDE_STATE_DIR", "OO_CLAUDE_OBSERVATORY_DIR"} {
		out = append(out, k+"="+s.Getenv(k))
	}
	return out
}

// Session describes a registry row to write. Zero fields get the values the
// real Claude Code would write for a headless session.
type Session struct {
	// PID is the session's claude process. 0 gives the session a process
	// of its own that the fake owns (see the package doc); a pid the
	// caller names (os.Getpid() to play the owner of a doorman child) is
	// the caller's to keep alive.
	PID       int
	SessionID string // default: a new UUID
	CWD       string // default: the station root
	Name      string // default: <base of cwd>-<2 hex>, nameSource derived
	Status    string // default: busy
	Socket    string // messagingSocketPath; default <root>/cc-socks/<pid>.sock (not created)
	Kind      string // default: interactive
	// Entrypoint defaults to sdk-cli.
	Entrypoint    string
	HostSessionID string
	// ProcStart overrides the real start time (to fake a recycled pid).
	ProcStart string
	StartedAt time.Time // default: now
	// DoormanInbox, when set (with PID 0), gives the session's process a
	// child that holds <DoormanInbox>/<session id>.inbox.doorman.lock open
	// (created 0600, with its directory), as the session's MCP doorman
	// does while it follows that inbox directory: what the process table
	// shows of a doorman. The child delivers nothing; AddSession returns
	// once it holds the file.
	DoormanInbox string
}

// AddSession writes <sessions>/<pid>.json for in and returns the row. A pid
// that already has a row fails the test: a second session must not replace
// the first silently.
func (s *Station) AddSession(in Session) station.Row {
	if !s.made() {
		return station.Row{}
	}
	s.tb.Helper()
	if in.SessionID == "" {
		in.SessionID = uuid.NewString()
	}
	switch {
	case in.PID == 0 && in.DoormanInbox != "":
		in.PID = s.spawnWithDoorman(filepath.Join(in.DoormanInbox, in.SessionID+".inbox.doorman.lock"))
	case in.PID == 0:
		in.PID = s.spawn()
	case in.DoormanInbox != "":
		s.tb.Fatalf("fakestation: DoormanInbox needs a session process of the fake's own (leave PID 0)")
	default:
		if _, err := os.Lstat(s.rowPath(in.PID)); err == nil {
			s.tb.Fatalf("fakestation: pid %d already has a session row; give each session its own pid (leave PID 0)", in.PID)
		}
	}
	if in.CWD == "" {
		in.CWD = s.Root
	}
	if in.Socket == "" {
		in.Socket = filepath.Join(s.Root, "cc-socks", strconv.Itoa(in.PID)+".sock")
	}
	if in.ProcStart == "" {
		info, err := (station.Proc{}).Info(in.PID)
		if err != nil {
			s.tb.Fatalf("fakestation: pid %d: %v", in.PID, err)
		}
		in.ProcStart = info.StartTicks
	}
	var ms int64
	if !in.StartedAt.IsZero() {
		ms = in.StartedAt.UnixMilli()
	}
	row := fakerow.Fill(station.Row{
		PID: in.PID, SessionID: in.SessionID, CWD: in.CWD, StartedAt: ms, ProcStart: in.ProcStart,
		Kind: in.Kind, Entrypoint: in.Entrypoint, MessagingSocketPath: in.Socket, Name: in.Name,
		HostSessionID: in.HostSessionID, Status: in.Status,
	}, time.Now())
	s.WriteRow(row)
	return row
}

// WriteRow writes row as <sessions>/<pid>.json (0644, as Claude Code does),
// replacing the file atomically.
func (s *Station) WriteRow(row station.Row) {
	if !s.made() {
		return
	}
	s.tb.Helper()
	if err := fakerow.Write(s.Paths.SessionsDir, row); err != nil {
		s.tb.Fatalf("fakestation: %v", err)
	}
}

func (s *Station) rowPath(pid int) string { return fakerow.Path(s.Paths.SessionsDir, pid) }

// SetStatus rewrites the status of the row of pid (busy, idle, waiting).
func (s *Station) SetStatus(pid int, status string) {
	if !s.made() {
		return
	}
	s.tb.Helper()
	r, err := station.ReadRow(s.rowPath(pid))
	if err != nil {
		s.tb.Fatalf("fakestation: %v", err)
	}
	now := time.Now().UnixMilli()
	r.Status, r.UpdatedAt, r.StatusUpdatedAt = status, now, now
	s.WriteRow(r)
}

// RemoveSession deletes the row of pid, as a clean exit does, and stops the
// session's process when the fake owns it.
func (s *Station) RemoveSession(pid int) {
	if !s.made() {
		return
	}
	s.tb.Helper()
	if err := os.Remove(s.rowPath(pid)); err != nil {
		s.tb.Fatalf("fakestation: %v", err)
	}
	s.release(pid)
}

// Crash stops the process of pid (which the fake must own) and leaves its
// row behind, as a SIGKILL does: the row then names a dead process.
func (s *Station) Crash(pid int) {
	if !s.made() {
		return
	}
	s.tb.Helper()
	s.mu.Lock()
	_, ok := s.procs[pid]
	s.mu.Unlock()
	if !ok {
		s.tb.Fatalf("fakestation: pid %d is not a session process of the fake", pid)
	}
	s.release(pid)
}

// WriteKey writes the session's key file (0600) holding token.
func (s *Station) WriteKey(row station.Row, token string) {
	if !s.made() {
		return
	}
	s.tb.Helper()
	sum := sha256.Sum256([]byte(row.MessagingSocketPath))
	path := filepath.Join(s.Paths.SessionsDir, strconv.Itoa(row.PID)+"."+hex.EncodeToString(sum[:])+".key")
	b, _ := json.Marshal(map[string]string{"peerToken": token, "procStart": row.ProcStart, "pidDomain": row.PidDomain})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		s.tb.Fatalf("fakestation: %v", err)
	}
}

// InboxPath returns <inbox>/<sessionID>.inbox.
func (s *Station) InboxPath(sessionID string) string {
	if s == nil {
		return ""
	}
	return filepath.Join(s.Paths.InboxDir, sessionID+".inbox")
}

// AddTranscript writes an empty transcript of sessionID (0600) in the
// project directory of cwd ("" means the station's root) and returns its
// path: the station then knows the session, as after a session that ran
// here and exited.
func (s *Station) AddTranscript(sessionID, cwd string) string {
	if !s.made() {
		return ""
	}
	s.tb.Helper()
	if cwd == "" {
		cwd = s.Root
	}
	dir := filepath.Join(s.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.tb.Fatalf("fakestation: %v", err)
	}
	p := filepath.Join(dir, sessionID+transcriptfile.Ext)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		s.tb.Fatalf("fakestation: %v", err)
	}
	return p
}
