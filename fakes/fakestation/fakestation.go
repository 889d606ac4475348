// Package fakestation is a Claude Code station in a temporary directory, for
// tests of oo-claude and of programs that use it.
//
// A [Station] lays out the directories the knobs name (config with its
// sessions and projects, inbox, state, observatory) under one root and writes
// registry rows exactly as the real Claude Code writes them: for a live pid,
// with that process's real procStart from /proc, so the station's liveness
// check runs unmodified. Env and Getenv hand the knobs to code under test.
package fakestation

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/station"
)

// TB is the part of testing.TB the fake needs. *testing.T and *testing.B
// satisfy it; a program that is not a test (examples/roundtrip) can supply
// its own.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	TempDir() string
}

// Station is a fake station rooted in a temporary directory.
type Station struct {
	Root  string
	Paths station.Paths
	tb    TB
}

// New lays out a station under tb.TempDir(). Every directory is 0700.
func New(tb TB) *Station {
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
			tb.Fatal(err)
		}
	}
	return &Station{Root: root, Paths: p, tb: tb}
}

// Station returns a station.Station over the fake's paths and the real /proc.
func (s *Station) Station() *station.Station { return station.New(s.Paths) }

// Getenv answers the knobs that point at the fake, then HOME (the root), and
// "" for everything else. Pass it where code takes a getenv seam.
func (s *Station) Getenv(key string) string {
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
	var out []string
	for _, k := range []string{"HOME", "CLAUDE_CONFIG_DIR", "OO_CLAUDE_SESSIONS_DIR", "OO_CLAUDE_PROJECTS_DIR",
		"OO_CLAUDE_INBOX_DIR", "OO_CLAUDE_STATE_DIR", "OO_CLAUDE_OBSERVATORY_DIR"} {
		out = append(out, k+"="+s.Getenv(k))
	}
	return out
}

// Session describes a registry row to write. Zero fields get the values the
// real Claude Code would write for a headless session of this process.
type Session struct {
	PID       int    // default: this process
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
}

// AddSession writes <sessions>/<pid>.json for s and returns the row.
func (s *Station) AddSession(in Session) station.Row {
	s.tb.Helper()
	if in.PID == 0 {
		in.PID = os.Getpid()
	}
	if in.SessionID == "" {
		in.SessionID = uuid.NewString()
	}
	if in.CWD == "" {
		in.CWD = s.Root
	}
	nameSource := "user"
	if in.Name == "" {
		var b [1]byte
		rand.Read(b[:])
		in.Name = filepath.Base(in.CWD) + "-" + hex.EncodeToString(b[:])
		nameSource = "derived"
	}
	if in.Status == "" {
		in.Status = station.StatusBusy
	}
	if in.Socket == "" {
		in.Socket = filepath.Join(s.Root, "cc-socks", strconv.Itoa(in.PID)+".sock")
	}
	if in.Kind == "" {
		in.Kind = "interactive"
	}
	if in.Entrypoint == "" {
		in.Entrypoint = "sdk-cli"
	}
	if in.ProcStart == "" {
		info, err := (station.Proc{}).Info(in.PID)
		if err != nil {
			s.tb.Fatalf("fakestation: pid %d: %v", in.PID, err)
		}
		in.ProcStart = info.StartTicks
	}
	if in.StartedAt.IsZero() {
		in.StartedAt = time.Now()
	}
	ms := in.StartedAt.UnixMilli()
	row := station.Row{
		PID: in.PID, SessionID: in.SessionID, CWD: in.CWD, StartedAt: ms, ProcStart: in.ProcStart,
		Version: "2.1.332", PeerProtocol: 1,
		PeerFeatures: []string{"notify_idle", "reply_across_default_dirs", "artifact_yield"},
		Kind:         in.Kind, Entrypoint: in.Entrypoint, PidDomain: "linux:fake:pid:[4026531836]",
		MessagingSocketPath: in.Socket, Name: in.Name, NameSource: nameSource, NameSince: ms,
		HostSessionID: in.HostSessionID, Status: in.Status, UpdatedAt: ms, StatusUpdatedAt: ms,
	}
	s.WriteRow(row)
	return row
}

// WriteRow writes row as <sessions>/<pid>.json (0644, as Claude Code does),
// replacing the file atomically.
func (s *Station) WriteRow(row station.Row) {
	s.tb.Helper()
	b, err := json.Marshal(rowJSON(row))
	if err != nil {
		s.tb.Fatal(err)
	}
	path := filepath.Join(s.Paths.SessionsDir, strconv.Itoa(row.PID)+".json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		s.tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		s.tb.Fatal(err)
	}
}

// rowJSON keeps asksForConvertedSkills: null as the real CLI writes it.
func rowJSON(r station.Row) map[string]any {
	b, _ := json.Marshal(r)
	m := map[string]any{}
	json.Unmarshal(b, &m)
	m["asksForConvertedSkills"] = nil
	return m
}

// SetStatus rewrites the status of the row of pid (busy, idle, waiting).
func (s *Station) SetStatus(pid int, status string) {
	s.tb.Helper()
	r, err := station.ReadRow(filepath.Join(s.Paths.SessionsDir, strconv.Itoa(pid)+".json"))
	if err != nil {
		s.tb.Fatal(err)
	}
	now := time.Now().UnixMilli()
	r.Status, r.UpdatedAt, r.StatusUpdatedAt = status, now, now
	s.WriteRow(r)
}

// RemoveSession deletes the row of pid, as a clean exit does.
func (s *Station) RemoveSession(pid int) {
	s.tb.Helper()
	if err := os.Remove(filepath.Join(s.Paths.SessionsDir, strconv.Itoa(pid)+".json")); err != nil {
		s.tb.Fatal(err)
	}
}

// WriteKey writes the session's key file (0600) holding token.
func (s *Station) WriteKey(row station.Row, token string) {
	s.tb.Helper()
	sum := sha256.Sum256([]byte(row.MessagingSocketPath))
	path := filepath.Join(s.Paths.SessionsDir, strconv.Itoa(row.PID)+"."+hex.EncodeToString(sum[:])+".key")
	b, _ := json.Marshal(map[string]string{"peerToken": token, "procStart": row.ProcStart, "pidDomain": row.PidDomain})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		s.tb.Fatal(err)
	}
}

// InboxPath returns <inbox>/<sessionID>.inbox.
func (s *Station) InboxPath(sessionID string) string {
	return filepath.Join(s.Paths.InboxDir, sessionID+".inbox")
}
