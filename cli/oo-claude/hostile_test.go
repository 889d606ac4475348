package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/claudeproc"
	"github.com/oo-family/oo-claude/internal/doormancmd"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakeowner"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/hostile"
	inboxfile "github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// hostileBound is how soon a verb must answer when a hostile file sits at a
// path it touches: the point is that it does not hang (a FIFO's open blocks
// for good), so the bound is generous. A verb answers in milliseconds; -race
// on two loaded cores and the package's parallel tests stretch that (2.3 s
// at a load of 7; 6.3 s with the suite beside other work, past the former
// 5 s bound). The sends run with OO_CLAUDE_WAIT_S=0, so none of that time
// is a wait for an ack. A verb that hangs is killed at hostileKill and the
// cell fails.
const (
	hostileBound = 30 * time.Second
	hostileKill  = 60 * time.Second
)

// hostileCase is one verb and one path it touches. setup lays out a station
// and returns the path to plant at, the argv and the environment; want gives
// the exit code the verb must answer with for each kind.
type hostileCase struct {
	verb, file string
	setup      func(t *testing.T) (path string, args, env []string)
	want       func(k hostile.Kind) int
	// owner runs the verb as a child of a fake session owner (the doorman).
	owner bool
	// replaces: the verb writes the file atomically, so another user's
	// regular file there is replaced (not written through).
	replaces bool
	// says, when set, gives for each kind a text the verb's output must
	// hold ("" for none).
	says func(k hostile.Kind) string
}

// notRegular says text for the kinds that are not a regular file (a
// symlink included) and nothing for the regular ones.
func notRegular(text string) func(hostile.Kind) string {
	return func(k hostile.Kind) string {
		if k == hostile.Foreign || k == hostile.WorldWritable {
			return ""
		}
		return text
	}
}

// resumeSetup resumes a finished session of a rig (its transcript
// written) with line ("" for none) and plants at the path file names.
func resumeSetup(file func(r *hlRig) string, line string) func(t *testing.T) (string, []string, []string) {
	return func(t *testing.T) (string, []string, []string) {
		r := newHLRig(t)
		r.fk.Script(fakeclaude.Script{Result: "OK"})
		r.transcriptFor(t, r.sid)
		p := file(r)
		os.Remove(p)
		args := []string{"resume", r.sid}
		if line != "" {
			args = append(args, line)
		}
		return p, args, r.env
	}
}

// all returns code for every kind.
func all(code int) func(hostile.Kind) int { return func(hostile.Kind) int { return code } }

// all1 says text for every kind.
func all1(text string) func(hostile.Kind) string { return func(hostile.Kind) string { return text } }

// byTrust returns bad for a kind that is not a regular file of the user, and
// good for the regular kinds another user planted (which the verb may use,
// because it replaces them or does not believe them).
func byKind(bad, untrusted int) func(hostile.Kind) int {
	return func(k hostile.Kind) int {
		if k == hostile.Foreign || k == hostile.WorldWritable {
			return untrusted
		}
		return bad
	}
}

// doctorSetup runs doctor inside a session (CLAUDE_CODE_SESSION_ID) whose
// inbox file named by suffix is planted; claude is a script that answers as
// Claude Code does, and the MCP check is off.
func doctorSetup(suffix string) func(t *testing.T) (string, []string, []string) {
	return func(t *testing.T) (string, []string, []string) {
		fs, sid, env := doctorStation(t)
		return fs.InboxPath(sid) + suffix, []string{"doctor"}, env
	}
}

// doctorStation is doctorSetup's station, session id and environment.
func doctorStation(t *testing.T) (*fakestation.Station, string, []string) {
	fs := fakestation.New(t)
	sid := uuid.NewString()
	claude := filepath.Join(fs.Root, "claude-bin")
	writeT(t, claude, "#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
	os.Chmod(claude, 0o700)
	env := append(fs.Env(), "OO_CLAUDE_BIN="+claude, "OO_CLAUDE_DOCTOR_MCP=0", "CLAUDE_CODE_SESSION_ID="+sid)
	return fs, sid, env
}

// doctorOutside is a station for doctor run outside a session, where it
// has nothing to find: claude answers as Claude Code does, the MCP check
// is off, the inbox and state dirs exist 0700.
func doctorOutside(t *testing.T) (*fakestation.Station, []string) {
	fs := fakestation.New(t)
	claude := filepath.Join(fs.Root, "claude-bin")
	writeT(t, claude, "#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
	os.Chmod(claude, 0o700)
	for _, d := range []string{fs.Paths.InboxDir, fs.Paths.StateDir} {
		os.MkdirAll(d, 0o700)
		os.Chmod(d, 0o700)
	}
	env := append(fs.Env(), "OO_CLAUDE_BIN="+claude, "OO_CLAUDE_DOCTOR_MCP=0")
	return fs, env
}

// notDir returns bad for every kind but a directory, which gets good.
func notDir(bad, good int) func(hostile.Kind) int {
	return func(k hostile.Kind) int {
		if k == hostile.Dir {
			return good
		}
		return bad
	}
}

// rowOf is the registry row in dir that names session sid.
func rowOf(t *testing.T, dir, sid string) string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), sid) {
			return p
		}
	}
	t.Fatalf("no registry row names %s in %s", sid, dir)
	return ""
}

// gcSetup runs gc (with args) over a session that does not run, whose
// inbox is empty and the inbox file named by suffix planted; --older-than
// 1s, so that only what is planted keeps it.
func gcSetup(suffix string, args ...string) func(t *testing.T) (string, []string, []string) {
	return func(t *testing.T) (string, []string, []string) {
		fs := fakestation.New(t)
		sid := uuid.NewString()
		writeT(t, fs.InboxPath(sid), "")
		old := time.Now().Add(-time.Hour)
		os.Chtimes(fs.InboxPath(sid), old, old)
		return fs.InboxPath(sid) + suffix, append([]string{"gc", "--older-than", "1s"}, args...), fs.Env()
	}
}

func hostileCases() []hostileCase {
	sendSetup := func(file func(fs *fakestation.Station, sid string) string, extra ...string) func(t *testing.T) (string, []string, []string) {
		return func(t *testing.T) (string, []string, []string) {
			fs := fakestation.New(t)
			sid := offline(fs)
			env := append(fs.Env(), "CLAUDE_CODE_MESSAGING_TOKEN="+testToken, "OO_CLAUDE_WAIT_S=0")
			env = append(env, extra...)
			return file(fs, sid), []string{"send", sid, "hello", "--from", "t"}, env
		}
	}
	inbox := func(suffix string) func(fs *fakestation.Station, sid string) string {
		return func(fs *fakestation.Station, sid string) string { return fs.InboxPath(sid) + suffix }
	}
	state := func(name string) func(fs *fakestation.Station, sid string) string {
		return func(fs *fakestation.Station, sid string) string { return filepath.Join(fs.Paths.StateDir, name) }
	}
	doormanSetup := func(suffix string) func(t *testing.T) (string, []string, []string) {
		return func(t *testing.T) (string, []string, []string) { return suffix, nil, nil } // resolved by runHostileOwner
	}
	obs := func(file func(o *obsStation) string, args ...string) func(t *testing.T) (string, []string, []string) {
		return func(t *testing.T) (string, []string, []string) {
			o := newObsStation(t)
			p := file(o)
			os.Remove(p)
			return p, args, o.fs.Env()
		}
	}
	lineageSetup := func(name string, args ...string) func(t *testing.T) (string, []string, []string) {
		return func(t *testing.T) (string, []string, []string) {
			fs := fakestation.New(t)
			return filepath.Join(fs.Paths.ObservatoryDir, name), args, fs.Env()
		}
	}
	child := uuid.NewString()
	return []hostileCase{
		// send to an offline session: 3 (queued-offline) when it can write,
		// 1 (refused) when the inbox or one of its files is hostile.
		{verb: "send", file: "inbox", setup: sendSetup(inbox("")), want: all(1)},
		{verb: "send", file: ".ack", setup: sendSetup(inbox(".ack")), want: all(1)},
		{verb: "send", file: ".offset", setup: sendSetup(inbox(".offset")), want: all(1)},
		{verb: "send", file: ".doorman.lock", setup: sendSetup(inbox(".doorman.lock")), want: all(1)},
		{verb: "send", file: ".doorman.json", setup: sendSetup(inbox(".doorman.json")), want: all(3)},
		{verb: "send", file: "throttle ledger", setup: sendSetup(func(fs *fakestation.Station, sid string) string {
			key := inboxfile.ThrottleFor(fs.Paths.StateDir, 0, nil).KeyFile(sid, "t")
			os.MkdirAll(filepath.Dir(key), 0o700) // the ledger's directory; a failure shows in the planting
			return key
		}, "OO_CLAUDE_MIN_INTERVAL_S=30"), want: all(1)},
		// A registry row the sender cannot trust is left out: the target
		// is then an offline session.
		{verb: "send", file: "registry row", setup: func(t *testing.T) (string, []string, []string) {
			fs := fakestation.New(t)
			row := fs.AddSession(fakestation.Session{PID: sleeper(t)})
			fs.AddTranscript(row.SessionID, "") // known here: queued-offline, not unknown-session
			p := filepath.Join(fs.Paths.SessionsDir, strconv.Itoa(row.PID)+".json")
			os.Remove(p)
			env := append(fs.Env(), "CLAUDE_CODE_MESSAGING_TOKEN="+testToken, "OO_CLAUDE_WAIT_S=0")
			return p, []string{"send", row.SessionID, "hello", "--from", "t"}, env
		}, want: all(3)},
		// The receipt cannot be written: the verdict stands.
		{verb: "send", file: "receipts.jsonl", setup: sendSetup(state("receipts.jsonl")), want: all(3)},

		// The foreground doorman: 3 (untrusted, not deliverable here) for
		// the files it believes, 0 when only its heartbeat cannot be written.
		{verb: "doorman", file: "inbox", setup: doormanSetup(""), want: all(3), owner: true},
		{verb: "doorman", file: ".ack", setup: doormanSetup(".ack"), want: all(3), owner: true},
		{verb: "doorman", file: ".offset", setup: doormanSetup(".offset"), want: all(3), owner: true},
		{verb: "doorman", file: ".doorman.lock", setup: doormanSetup(".doorman.lock"), want: all(3), owner: true},
		{verb: "doorman", file: ".doorman.attempt", setup: doormanSetup(".doorman.attempt"), want: all(3), owner: true},
		{verb: "send", file: ".doorman.attempt", setup: sendSetup(inbox(".doorman.attempt")), want: all(1)},
		{verb: "doorman", file: "registry row", setup: doormanSetup("ROW"), want: all(3), owner: true},
		// The doorman has the token its session handed it and never needs
		// the key file: the line is delivered (0), the key left as it is.
		{verb: "doorman", file: "key file", setup: doormanSetup("KEY"), want: all(0), owner: true},
		{verb: "doorman", file: ".doorman.json", setup: doormanSetup(".doorman.json"), want: byKind(0, 0), owner: true, replaces: true},

		// The observers answer 0 and leave out what they cannot trust.
		{verb: "sessions", file: "registry row", setup: obs(func(o *obsStation) string {
			return filepath.Join(o.fs.Paths.SessionsDir, strconv.Itoa(os.Getpid())+".json")
		}, "sessions", "--json"), want: all(0)},
		{verb: "sessions", file: "inbox", setup: obs(func(o *obsStation) string { return inboxv1.FilesFor(o.fs.Paths.InboxDir, o.sidA).Inbox }, "sessions", "--json"), want: all(0)},
		{verb: "sessions", file: ".ack", setup: obs(func(o *obsStation) string { return inboxv1.FilesFor(o.fs.Paths.InboxDir, o.sidA).Ack }, "sessions"), want: all(0)},
		{verb: "sessions", file: ".offset", setup: obs(func(o *obsStation) string { return inboxv1.FilesFor(o.fs.Paths.InboxDir, o.sidA).Offset }, "sessions"), want: all(0)},
		{verb: "sessions", file: ".doorman.json", setup: obs(func(o *obsStation) string {
			return inboxv1.FilesFor(o.fs.Paths.InboxDir, o.sidA).Heartbeat
		}, "sessions"), want: all(0)},
		{verb: "sessions", file: "lineage.jsonl", setup: obs(func(o *obsStation) string { return o.fs.Paths.LineageFile() }, "sessions"), want: all(0)},
		{verb: "sessions", file: "transcript", setup: obs(func(o *obsStation) string { return o.transcriptA }, "sessions"), want: all(0)},
		{verb: "riders", file: "rider transcript", setup: obs(func(o *obsStation) string {
			return filepath.Join(strings.TrimSuffix(o.transcriptA, ".jsonl"), "subagents", "agent-ride1.jsonl")
		}, "riders", "--all"), want: all(0)},
		{verb: "riders", file: "rider meta", setup: obs(func(o *obsStation) string {
			return filepath.Join(strings.TrimSuffix(o.transcriptA, ".jsonl"), "subagents", "agent-ride1.meta.json")
		}, "riders", "--all"), want: all(0)},
		{verb: "sessions --write", file: "target", setup: obs(func(o *obsStation) string { return filepath.Join(o.fs.Root, "out.json") }, "sessions", "--write", "OUT"), want: byKind(1, 0), replaces: true},
		{verb: "riders --write", file: "target", setup: obs(func(o *obsStation) string { return filepath.Join(o.fs.Root, "out.json") }, "riders", "--write", "OUT"), want: byKind(1, 0), replaces: true},
		// read: the transcript is refused (1).
		{verb: "read", file: "transcript", setup: func(t *testing.T) (string, []string, []string) {
			o := newObsStation(t)
			os.Remove(o.transcriptA)
			return o.transcriptA, []string{"read", o.sidA}, o.fs.Env()
		}, want: all(1)},

		// lineage: the ledger and its lock refuse register (1); show answers
		// 1 for a ledger it cannot read.
		{verb: "lineage register", file: "lineage.jsonl", setup: lineageSetup("lineage.jsonl", "lineage", "register", "--parent", uuid.NewString(), "--child", child), want: all(1)},
		{verb: "lineage register", file: "lineage lock", setup: lineageSetup("lineage.jsonl.lock", "lineage", "register", "--parent", uuid.NewString(), "--child", child), want: all(1)},
		{verb: "lineage show", file: "lineage.jsonl", setup: lineageSetup("lineage.jsonl", "lineage", "show"), want: all(1)},

		// start --out: a target that is not a regular file is refused (1)
		// before claude runs; another user's regular file is replaced.
		{verb: "start --out", file: "result file", setup: func(t *testing.T) (string, []string, []string) {
			r := newHLRig(t)
			r.fk.Script(fakeclaude.Script{Result: "READY"})
			out := filepath.Join(r.fs.Root, "result.json")
			return out, []string{"start", "hi", "--cwd", r.cwd, "--out", "OUT", "--no-lineage"}, r.env
		}, want: byKind(1, 0), replaces: true},
		// start: a hostile inbox is refused (1) before claude runs.
		{verb: "start", file: "inbox", setup: func(t *testing.T) (string, []string, []string) {
			r := newHLRig(t)
			r.fk.Script(fakeclaude.Script{Result: "READY"})
			sid := uuid.NewString()
			return r.fs.InboxPath(sid), []string{"start", "hi", "--cwd", r.cwd, "--session-id", sid, "--no-lineage"}, r.env
		}, want: all(1)},
		// gc keeps and reports (1) an inbox one of whose files it cannot
		// trust, the fix named, and never hangs on what it finds. Before, a
		// FIFO at an old inbox's .ack, .offset or .doorman.json was removed
		// silently (0), and a lone hostile inbox was not listed.
		{verb: "gc", file: "inbox", setup: func(t *testing.T) (string, []string, []string) {
			fs := fakestation.New(t)
			return fs.InboxPath(uuid.NewString()), []string{"gc"}, fs.Env()
		}, want: all(1), says: all1("fix:")},
		{verb: "gc --dry-run", file: ".doorman.lock", setup: gcSetup(".doorman.lock", "--dry-run"), want: all(1), says: all1("fix:")},
		{verb: "gc", file: ".doorman.lock", setup: gcSetup(".doorman.lock"), want: all(1), says: all1("fix:")},
		{verb: "gc", file: ".ack", setup: gcSetup(".ack"), want: all(1), says: all1("fix:")},
		{verb: "gc", file: ".offset", setup: gcSetup(".offset"), want: all(1), says: all1("fix:")},
		{verb: "gc", file: ".doorman.json", setup: gcSetup(".doorman.json"), want: all(1), says: all1("fix:")},
		{verb: "gc", file: ".doorman.attempt", setup: gcSetup(".doorman.attempt"), want: all(1), says: all1("fix:")},
		// doctor inside a session: a hostile inbox file or heartbeat is a
		// finding (1), answered at once.
		{verb: "doctor", file: "inbox", setup: doctorSetup(""), want: all(1)},
		{verb: "doctor", file: ".doorman.json", setup: doctorSetup(".doorman.json"), want: all(1)},
		{verb: "doctor", file: ".ack", setup: doctorSetup(".ack"), want: all(1)},
		// resume: a hostile inbox or inbox file is refused (bad-inbox, 1)
		// before the lock and before claude runs, with or without a line;
		// a transcript that is not a regular file is said as such. Before,
		// resume ran claude past a FIFO inbox, and without a line said none
		// waits in it.
		{verb: "resume", file: "inbox", setup: resumeSetup(func(r *hlRig) string { return r.fs.InboxPath(r.sid) }, "hi"), want: all(1), says: all1("bad-inbox")},
		{verb: "resume (no line)", file: "inbox", setup: resumeSetup(func(r *hlRig) string { return r.fs.InboxPath(r.sid) }, ""), want: all(1), says: all1("bad-inbox")},
		{verb: "resume", file: ".ack", setup: resumeSetup(func(r *hlRig) string { return r.fs.InboxPath(r.sid) + ".ack" }, "hi"), want: all(1), says: all1("bad-inbox")},
		{verb: "resume (no line)", file: ".offset", setup: resumeSetup(func(r *hlRig) string { return r.fs.InboxPath(r.sid) + ".offset" }, ""), want: all(1), says: all1("bad-inbox")},
		{verb: "resume", file: "transcript", setup: resumeSetup(func(r *hlRig) string {
			return filepath.Join(r.fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(r.cwd), r.sid+".jsonl")
		}, "hi"), want: all(1), says: notRegular("is not a regular file")},
		// read and doctor over a hostile registry row (left out: the
		// session is then offline) or sessions dir.
		{verb: "read", file: "registry row", setup: func(t *testing.T) (string, []string, []string) {
			o := newObsStation(t)
			p := rowOf(t, o.fs.Paths.SessionsDir, o.sidA)
			os.Remove(p)
			return p, []string{"read", o.sidA}, o.fs.Env()
		}, want: all(0)},
		{verb: "read", file: "sessions dir", setup: func(t *testing.T) (string, []string, []string) {
			o := newObsStation(t)
			os.RemoveAll(o.fs.Paths.SessionsDir)
			return o.fs.Paths.SessionsDir, []string{"read", o.sidA}, o.fs.Env()
		}, want: notDir(1, 0)},
		// doctor outside a session (nothing else to find): a hostile row is
		// a finding naming it (it was left out silently: exit 0), a hostile
		// sessions dir is unreadable with the fix.
		{verb: "doctor", file: "registry row", setup: func(t *testing.T) (string, []string, []string) {
			fs, env := doctorOutside(t)
			row := fs.AddSession(fakestation.Session{PID: sleeper(t)})
			p := filepath.Join(fs.Paths.SessionsDir, strconv.Itoa(row.PID)+".json")
			os.Remove(p)
			return p, []string{"doctor"}, env
		}, want: all(1), says: all1("[registry-row-untrusted]")},
		{verb: "doctor", file: "sessions dir", setup: func(t *testing.T) (string, []string, []string) {
			fs, env := doctorOutside(t)
			os.RemoveAll(fs.Paths.SessionsDir)
			return fs.Paths.SessionsDir, []string{"doctor"}, env
		}, want: notDir(1, 0), says: func(k hostile.Kind) string {
			if k == hostile.Dir {
				return "ok       registry"
			}
			return "[registry-unreadable]"
		}},
		// start inside a session (CLAUDE_CODE_SESSION_ID names the parent)
		// with a hostile lineage ledger: claude runs, the link is not
		// registered and the start says so.
		{verb: "start (in a session)", file: "lineage.jsonl", setup: func(t *testing.T) (string, []string, []string) {
			r := newHLRig(t)
			r.fk.Script(fakeclaude.Script{Result: "READY"})
			env := append(append([]string(nil), r.env...), "CLAUDE_CODE_SESSION_ID="+uuid.NewString())
			return r.fs.Paths.LineageFile(), []string{"start", "hi", "--cwd", r.cwd, "--json"}, env
		}, want: all(0), says: all1(`"registered":false`)},
		// start --systemd: a prompt file that is not a regular file is
		// refused (1) before systemd-run; another user's is replaced (the
		// unit manager then fails: 4).
		{verb: "start --systemd", file: "prompt file", setup: func(t *testing.T) (string, []string, []string) {
			r := newHLRig(t)
			r.fk.ScriptFor(fakeclaude.NameSystemdRun, fakeclaude.Script{Exit: 1, Stderr: "no bus"})
			out := filepath.Join(r.fs.Root, "result.json")
			return claudeproc.PromptFile(out), []string{"start", "hi", "--cwd", r.cwd, "--systemd", "--out", out, "--no-lineage"}, r.env
		}, want: byKind(1, 4), replaces: true},
		// resume: a registry row it cannot trust is left out (the session
		// is then not held by it) and the turn runs (0), without a hang.
		{verb: "resume", file: "registry row", setup: func(t *testing.T) (string, []string, []string) {
			p, args, env := resumeSetup(func(r *hlRig) string {
				row := r.fs.AddSession(fakestation.Session{PID: sleeper(t)})
				return filepath.Join(r.fs.Paths.SessionsDir, strconv.Itoa(row.PID)+".json")
			}, "hi")(t)
			return p, args, env
		}, want: all(0)},
		// resume: its lock is refused (1).
		{verb: "resume", file: "resume lock", setup: func(t *testing.T) (string, []string, []string) {
			r := newHLRig(t)
			r.fk.Script(fakeclaude.Script{Result: "OK"})
			r.transcriptFor(t, r.sid)
			lock := filepath.Join(r.fs.Paths.StateDir, "locks", "resume-"+r.sid+".lock")
			os.MkdirAll(filepath.Dir(lock), 0o700)
			return lock, []string{"resume", r.sid, "hi"}, r.env
		}, want: all(1)},
	}
}

// TestHostileFiles plants each hostile kind at each path each verb touches
// and runs the real binary: it answers within the bound with its documented
// exit code, the planted file is left as it was, and nothing outside the
// station (the symlink's decoy) changed.
func TestHostileFiles(t *testing.T) {
	t.Parallel()
	for _, c := range hostileCases() {
		for _, k := range hostile.Kinds() {
			t.Run(c.verb+"/"+c.file+"/"+string(k), func(t *testing.T) {
				t.Parallel()
				runHostileCell(t, c, k)
			})
		}
	}
}

func runHostileCell(t *testing.T, c hostileCase, k hostile.Kind) {
	decoy := filepath.Join(t.TempDir(), "decoy")
	var path string
	var args, env []string
	var o *fakeowner.Owner
	if c.owner {
		o = fakeowner.New(t, fakeowner.Options{})
		suffix, _, _ := c.setup(t)
		path = o.Files().Inbox + suffix
		switch suffix {
		case "ROW": // the owner's own registry row
			path = filepath.Join(o.Station.Paths.SessionsDir, strconv.Itoa(o.Row.PID)+".json")
			os.Remove(path)
		case "KEY": // the owner's key file, with a line waiting to be delivered
			path = o.Station.Station().KeyFile(o.Row)
			os.Remove(path)
			o.Append("[a 📡] delivered without the key file")
		}
		args = []string{"doorman", "--allow-foreground", "--once", "--json"}
	} else {
		path, args, env = c.setup(t)
		args = append([]string(nil), args...) // the cells of a case share setup's slice
	}
	for i, a := range args {
		if a == "OUT" {
			args[i] = path
		}
	}
	if err := hostile.Plant(path, k, []byte("planted\n"), decoy); errors.Is(err, hostile.ErrNeedRoot) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	before, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), hostileKill)
	defer cancel()
	start := time.Now()
	var r result
	if c.owner {
		ch := o.Start(command(ctx, t, nil, args...))
		ch.Stdin.Close()
		code, err := ch.Wait(ctx)
		if err != nil {
			t.Fatalf("doorman: %v (hung?); stderr:\n%s", err, ch.Stderr())
		}
		r = result{stdout: ch.Stdout(), stderr: ch.Stderr(), code: code}
	} else {
		cmd := command(ctx, t, env, args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r = result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
		if ctx.Err() != nil {
			t.Fatalf("%v hung: killed after %v (%v)", args, hostileKill, err)
		}
	}
	took := time.Since(start)
	if took > hostileBound {
		t.Errorf("answered after %v, want < %v", took, hostileBound)
	}
	if want := c.want(k); r.code != want {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, want, r.stdout, r.stderr)
	}
	if c.says != nil {
		if want := c.says(k); !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("the output does not say %q\nstdout: %s\nstderr: %s", want, r.stdout, r.stderr)
		}
	}
	after, err := os.Lstat(path)
	replaced := c.replaces && (k == hostile.Foreign || k == hostile.WorldWritable)
	switch {
	case err != nil && !replaced:
		t.Errorf("the planted %s is gone: %v", k, err)
	case !replaced && after.Mode() != before.Mode():
		t.Errorf("the planted %s became %v", k, after.Mode())
	}
	if k == hostile.Symlink {
		if b, _ := os.ReadFile(decoy); string(b) != "decoy\n" {
			t.Errorf("written through the symlink: decoy holds %q", b)
		}
	}
	if (k == hostile.Foreign || k == hostile.WorldWritable) && !replaced {
		if b, _ := os.ReadFile(path); string(b) != "planted\n" {
			t.Errorf("the %s file was written: %q", k, b)
		}
	}
	if strings.Contains(r.stdout+r.stderr, testToken) {
		t.Error("the token appears in the output")
	}
}

// TestHostileKnobsAndFlags: a hex-float seconds value and a relative
// directory knob are usage errors (exit 2), and nothing is written under
// the working directory. Before, "--wait 0x1p1" waited 2 s and a relative
// OO_CLAUDE_INBOX_DIR put the line under the sender's working directory.
func TestHostileKnobsAndFlags(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	sid := uuid.NewString()
	cases := []struct {
		name string
		env  []string
		args []string
	}{
		{"--wait hex float", nil, []string{"send", sid, "hi", "--wait", "0x1p1"}},
		{"--seen hex float", nil, []string{"send", sid, "hi", "--seen", "0x1p-2"}},
		{"OO_CLAUDE_WAIT_S hex float", []string{"OO_CLAUDE_WAIT_S=0x1p1"}, []string{"send", sid, "hi"}},
		{"relative OO_CLAUDE_INBOX_DIR", []string{"OO_CLAUDE_INBOX_DIR=inbox"}, []string{"send", sid, "hi"}},
		{"relative OO_CLAUDE_STATE_DIR", []string{"OO_CLAUDE_STATE_DIR=state"}, []string{"sessions"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cwd := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), hostileKill)
			defer cancel()
			cmd := command(ctx, t, append(fs.Env(), c.env...), c.args...)
			cmd.Dir = cwd
			var errb strings.Builder
			cmd.Stderr = &errb
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("exit %d, want 2; stderr: %s", code, errb.String())
			}
			if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
				t.Errorf("written under the working directory: %v", ents)
			}
		})
	}
	if ents, _ := os.ReadDir(fs.Paths.InboxDir); len(ents) != 0 {
		t.Errorf("the inbox dir holds %v", ents)
	}
}

// hostileText holds what a hostile peer, transcript or registry row could
// put in front of a person: an OSC that retitles the terminal, a CSI that
// clears it, a right-to-left override and a C1 control.
const hostileText = "x\x1b]0;owned\x07y \x1b[2J \u202eevil\u202c \u009b"

// TestHumanOutputEscapes: read, sessions, riders and lineage show control
// characters, escape sequences and bidi overrides as visible escapes; --json
// keeps the exact text. Before, read copied an OSC from a transcript to the
// terminal as it was.
func TestHumanOutputEscapes(t *testing.T) {
	t.Parallel()
	o := newObsStation(t)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	cwd := filepath.Join(o.fs.Root, "work")
	writeT(t, o.transcriptA, jsonl(t,
		map[string]any{"type": "user", "sessionId": o.sidA, "cwd": cwd, "timestamp": now, "uuid": "u1",
			"message": map[string]any{"role": "user", "content": "[peer 📡] " + hostileText}},
		map[string]any{"type": "assistant", "sessionId": o.sidA, "cwd": cwd, "timestamp": now, "uuid": "u2",
			"message": map[string]any{"id": "m1", "role": "assistant", "stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": "answer " + hostileText}}}},
	))
	// A registry row names the session with escapes too (Claude Code's
	// file, not ours to trust).
	row := o.fs.AddSession(fakestation.Session{PID: sleeper(t), Name: "n" + hostileText})
	// A rider whose last text holds them.
	sub := filepath.Join(strings.TrimSuffix(o.transcriptA, ".jsonl"), "subagents")
	writeT(t, filepath.Join(sub, "agent-esc.jsonl"), jsonl(t,
		map[string]any{"type": "assistant", "isSidechain": true, "agentId": "esc", "timestamp": now,
			"message": map[string]any{"id": "m-esc", "role": "assistant", "stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": hostileText}}}}))
	writeT(t, o.fs.Paths.LineageFile(), jsonl(t, map[string]any{"ts": "2026-11-30T11:00:00.000Z", "child_session": o.sidB,
		"parent_session": o.sidA, "title": hostileText, "by": "parent"}))

	raw := []string{"\x1b", "\u202e", "\u009b", "\a"}
	for _, args := range [][]string{{"read", o.sidA}, {"sessions"}, {"sessions", "--all"}, {"riders", "--all"}, {"riders", o.sidA, "--all"}, {"lineage", "show"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runBinary(t, o.fs.Env(), "", args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			for _, c := range raw {
				if strings.Contains(r.stdout, c) || strings.Contains(r.stderr, c) {
					t.Errorf("output holds %q raw:\n%s", c, r.stdout)
				}
			}
			if !strings.Contains(r.stdout, `\x1b]0;owned\x07`) && !strings.Contains(r.stdout, `\u202e`) {
				t.Errorf("the escapes are not shown visibly:\n%s", r.stdout)
			}
		})
	}
	// --json keeps the exact text.
	r := runBinary(t, o.fs.Env(), "", "read", o.sidA, "--json")
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil || !strings.Contains(r.stdout, `\u001b]0;owned\u0007`) {
		t.Errorf("read --json: %v\n%s", err, r.stdout)
	}
	r = runBinary(t, o.fs.Env(), "", "sessions", "--json")
	if !strings.Contains(r.stdout, `"name":"n`) || !strings.Contains(r.stdout, row.SessionID) {
		t.Errorf("sessions --json lost the row:\n%s", r.stdout)
	}
	var doc struct {
		Sessions []struct{ Name string } `json:"sessions"`
	}
	json.Unmarshal([]byte(r.stdout), &doc)
	found := false
	for _, s := range doc.Sessions {
		found = found || s.Name == row.Name
	}
	if !found {
		t.Errorf("sessions --json does not keep the exact name %q", row.Name)
	}
}

// TestTornLastLine: after a writer died mid-line in receipts.jsonl,
// lineage.jsonl or the inbox, the next append starts a new line: the new row
// reads back whole and the torn one is skipped. Before, the new row was
// glued onto the torn one, never to be read back, while the writer reported
// success (lineage register said appended: true).
func TestTornLastLine(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	sid := offline(fs)
	env := append(fs.Env(), "CLAUDE_CODE_MESSAGING_TOKEN="+testToken, "OO_CLAUDE_WAIT_S=0", "OO_CLAUDE_MIN_INTERVAL_S=0")
	receipts := fs.Paths.ReceiptsFile()
	writeT(t, receipts, `{"kind":"send","class":"queued-offline"}`+"\n"+`{"kind":"send","cla`)
	writeT(t, fs.InboxPath(sid), "[a 📡] whole\n[b 📡] tor")
	writeT(t, fs.Paths.LineageFile(), `{"ts":"2026-11-30T11:00:00.000Z","child_session":"`)

	r := runBinary(t, env, "", "send", sid, "after the tear", "--from", "t", "--json")
	if r.code != 3 {
		t.Fatalf("send: exit %d: %s", r.code, r.stderr)
	}
	row := jsonRow(t, r.stdout)
	var off int64
	json.Unmarshal(row["line_offset"], &off)
	inbox, _ := os.ReadFile(fs.InboxPath(sid))
	// The torn inbox line is ended with a NUL (inbox.TornMark): the
	// doorman refuses it, never delivers the start of a line.
	if want := "[a 📡] whole\n[b 📡] tor\x00\n[t 📡] after the tear\n"; string(inbox) != want {
		t.Errorf("inbox %q, want %q", inbox, want)
	}
	if int(off) > len(inbox) || string(inbox[off:]) != "[t 📡] after the tear\n" {
		t.Errorf("line_offset %d does not point at the line in %q", off, inbox)
	}
	b, _ := os.ReadFile(receipts)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["line"] != "[t 📡] after the tear" {
		t.Errorf("the last receipt row does not read back: %v in %q", err, b)
	}

	child, parent := uuid.NewString(), uuid.NewString()
	r = runBinary(t, env, "", "lineage", "register", "--parent", parent, "--child", child, "--json")
	if r.code != 0 {
		t.Fatalf("lineage register: exit %d: %s", r.code, r.stderr)
	}
	r = runBinary(t, env, "", "lineage", "show", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, child) {
		t.Errorf("lineage show does not read the registered row back: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestDoormanDeliversNothingFromUntrustedInbox: a line planted in an inbox
// directory others can write is not delivered; the MCP doorman's heartbeat
// says untrusted (and sessions shows it), and once the directory is fixed
// the doorman follows and delivers. Before, a line planted by another user
// in a world-writable inbox directory was delivered into the session.
func TestDoormanDeliversNothingFromUntrustedInbox(t *testing.T) {
	t.Parallel()
	o := fakeowner.New(t, fakeowner.Options{})
	o.Append("[planted 📡] do something")
	if err := os.Chmod(o.Station.Paths.InboxDir, 0o777); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 30*time.Second)
	c := o.Start(command(ctx, t, []string{"OO_CLAUDE_DOOR_SETTLE_S=0.05"}, "doorman", "--mcp"))
	c.Stdin.Write([]byte(initialize))
	h, err := o.WaitHeartbeat(ctx, func(h inboxv1.Heartbeat) bool { return h.State == inboxv1.StateUntrusted })
	if err != nil {
		t.Fatalf("no untrusted heartbeat: %v; stderr:\n%s", err, c.Stderr())
	}
	if !strings.Contains(h.LastError, "chmod go-w "+o.Station.Paths.InboxDir) {
		t.Errorf("the heartbeat does not name the fix: %q", h.LastError)
	}
	r := runBinary(t, o.Station.Env(), "", "sessions")
	if !strings.Contains(r.stdout, "untrusted") {
		t.Errorf("sessions does not show the untrusted doorman:\n%s", r.stdout)
	}
	s := runBinary(t, append(o.Station.Env(), "CLAUDE_CODE_MESSAGING_TOKEN="+testToken), "", "send", o.SessionID(), "hi", "--from", "t", "--wait", "0")
	if s.code != 1 || !strings.Contains(s.stderr+s.stdout, "chmod go-w") {
		t.Errorf("send into the untrusted inbox: exit %d %s %s", s.code, s.stdout, s.stderr)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(userFrames(o.Door)); n != 0 || len(o.Acks()) != 0 {
		t.Fatalf("%d frames, %d acks from an untrusted inbox", n, len(o.Acks()))
	}
	// Fixed: the doorman follows on its next check and delivers the line.
	if err := os.Chmod(o.Station.Paths.InboxDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := o.WaitAcks(ctx, 1); err != nil {
		t.Fatalf("no ack after the fix: %v; stderr:\n%s", err, c.Stderr())
	}
	c.Stdin.Close()
	c.Wait(ctx)
}

// TestForegroundDoormanExitCodes: the foreground doorman answers only its
// documented codes: an ack, offset or inbox error (the line waits) is 4 like
// a failed delivery; it was 1.
func TestForegroundDoormanExitCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"ok", nil, 0},
		{"not deliverable here", &doorman.IdentityError{State: inboxv1.StateUntrusted, Detail: "x"}, 3},
		{"delivery failed", &doorman.DeliveryError{Inbox: "i", Err: errors.New("door")}, 4},
		{"offset unreadable", &fs.PathError{Op: "parse", Path: "x.inbox.offset", Err: errors.New("bad offset")}, 4},
		{"ack unwritable", &fs.PathError{Op: "write", Path: "x.inbox.ack", Err: syscall.EIO}, 4},
	}
	for _, c := range cases {
		if got := doormancmd.ExitCode(c.err); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}

// TestWatchHostileFiles: watch over a station whose inbox, transcript and
// registry row are each hostile kind (a FIFO, directory, socket, device,
// symlink, another user's file, one others can write) keeps answering and
// stops at SIGINT within the bound (exit 0), the planted files untouched.
func TestWatchHostileFiles(t *testing.T) {
	t.Parallel()
	for _, k := range hostile.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			o := newObsStation(t)
			inbox := inboxv1.FilesFor(o.fs.Paths.InboxDir, o.sidA).Inbox
			row := filepath.Join(o.fs.Paths.SessionsDir, "4242.json")
			decoy := filepath.Join(t.TempDir(), "decoy")
			paths := []string{inbox, o.transcriptA, row}
			modes := map[string]os.FileMode{}
			for _, p := range paths {
				os.Remove(p)
				if err := hostile.Plant(p, k, []byte("planted\n"), decoy); errors.Is(err, hostile.ErrNeedRoot) {
					t.Skip(err)
				} else if err != nil {
					t.Fatal(err)
				}
				fi, _ := os.Lstat(p)
				modes[p] = fi.Mode()
			}
			ctx, cancel := context.WithTimeout(context.Background(), hostileKill)
			defer cancel()
			cmd := command(ctx, t, o.fs.Env(), "watch", "--json")
			var out, errb syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Session B's initial events: the watch has read the station.
			for !strings.Contains(out.String(), o.sidB) && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
			start := time.Now()
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			if took := time.Since(start); took > hostileBound || ctx.Err() != nil {
				t.Fatalf("watch took %v to stop after SIGINT (hung?)", took)
			}
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit %d; stderr: %s", code, errb.String())
			}
			if !strings.Contains(out.String(), o.sidB) {
				t.Errorf("watch did not keep answering (session B missing):\n%s", out.String())
			}
			for _, p := range paths {
				if fi, err := os.Lstat(p); err != nil || fi.Mode() != modes[p] {
					t.Errorf("%s is no longer the planted %s: %v %v", p, k, fi, err)
				}
				if k == hostile.Foreign || k == hostile.WorldWritable {
					if b, _ := os.ReadFile(p); string(b) != "planted\n" {
						t.Errorf("the %s file %s was written: %q", k, p, b)
					}
				}
			}
			if b, err := os.ReadFile(decoy); err == nil && string(b) != "decoy\n" {
				t.Errorf("written through the symlink: %q", b)
			}
		})
	}
}

// TestSecondsBoundNamed: a seconds value past the bound is a usage error
// that names the bound, in a flag and a knob alike; an exponent within it
// is a number of seconds. Before, "--wait 1e20" was refused with "want
// seconds ≥ 0", which it is.
func TestSecondsBoundNamed(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	sid := offline(fs)
	env := append(fs.Env(), "CLAUDE_CODE_MESSAGING_TOKEN="+testToken)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
		says string
	}{
		{"--wait 1e20", nil, []string{"send", sid, "hi", "--from", "t", "--wait", "1e20"}, 2, `want seconds ≥ 0 and ≤ 10000000 (a decimal such as 5, 0.5 or 1e-3), got "1e20"`},
		{"--timeout 0", nil, []string{"resume", sid, "hi", "--timeout", "0"}, 2, `want seconds > 0 and ≤ 10000000`},
		{"OO_CLAUDE_WAIT_S=1e20", []string{"OO_CLAUDE_WAIT_S=1e20"}, []string{"send", sid, "hi", "--from", "t"}, 2, `want seconds ≥ 0 and ≤ 10000000`},
		{"--wait 1e-3", nil, []string{"send", sid, "hi", "--from", "t", "--wait", "1e-3"}, 3, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runBinary(t, append(append([]string(nil), env...), c.env...), "", c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.says) {
				t.Errorf("exit %d, want %d, saying %q\nstderr: %s", r.code, c.code, c.says, r.stderr)
			}
		})
	}
}

// TestRelativeClaudeConfigDir: a relative CLAUDE_CONFIG_DIR is taken
// against the working directory, as Claude Code takes it (measured with
// 2.1.332), and claude, which start runs in --cwd, is handed the absolute
// dir, so it writes the transcript where read then finds it. It was a usage
// error (exit 2) of every verb.
func TestRelativeClaudeConfigDir(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.fk.Script(fakeclaude.Script{Result: "READY", Transcript: true})
	var env []string
	for _, kv := range r.env {
		if !strings.HasPrefix(kv, "OO_CLAUDE_SESSIONS_DIR=") && !strings.HasPrefix(kv, "OO_CLAUDE_PROJECTS_DIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "CLAUDE_CONFIG_DIR="+filepath.Base(r.fs.Paths.ConfigDir))
	run := func(args ...string) result {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := command(ctx, t, env, args...)
		cmd.Dir = filepath.Dir(r.fs.Paths.ConfigDir)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		return result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
	}
	if res := run("start", "hi", "--cwd", r.cwd, "--session-id", r.sid, "--no-lineage"); res.code != 0 {
		t.Fatalf("start: exit %d: %s", res.code, res.stderr)
	}
	calls := r.fk.Calls("claude")
	if len(calls) != 1 || !slices.Contains(calls[0].Env, "CLAUDE_CONFIG_DIR="+r.fs.Paths.ConfigDir) {
		t.Fatalf("claude was not handed CLAUDE_CONFIG_DIR=%s: %v", r.fs.Paths.ConfigDir, calls)
	}
	if res := run("read", r.sid, "--json"); res.code != 0 || !strings.Contains(res.stdout, r.fs.Paths.ConfigDir) {
		t.Errorf("read: exit %d: %s %s", res.code, res.stdout, res.stderr)
	}
}

// TestTopHostileFiles: top over a station whose inbox, transcript,
// registry row and lineage ledger are each hostile kind shows the view
// (session B on the screen) within the bound, quits at q within it and
// leaves the planted files as they were. It runs under tmux: top needs a
// terminal.
func TestTopHostileFiles(t *testing.T) {
	t.Parallel()
	for _, k := range hostile.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			o := newObsStation(t)
			inbox := inboxv1.FilesFor(o.fs.Paths.InboxDir, o.sidA).Inbox
			row := filepath.Join(o.fs.Paths.SessionsDir, "4242.json")
			decoy := filepath.Join(t.TempDir(), "decoy")
			paths := []string{inbox, o.transcriptA, row, o.fs.Paths.LineageFile()}
			modes := map[string]os.FileMode{}
			for _, p := range paths {
				os.Remove(p)
				if err := hostile.Plant(p, k, []byte("planted\n"), decoy); errors.Is(err, hostile.ErrNeedRoot) {
					t.Skip(err)
				} else if err != nil {
					t.Fatal(err)
				}
				fi, _ := os.Lstat(p)
				modes[p] = fi.Mode()
			}
			p := newPane(t, 120, 30, append(o.fs.Env(), "LANG=C.UTF-8", "TERM=xterm-256color"))
			start := time.Now()
			p.keys("oo-claude top", "Enter")
			p.waitFor("session B in the view", func(s string) bool { return strings.Contains(s, o.sidB[:8]) && strings.Contains(s, o.nameB) })
			if took := time.Since(start); took > hostileBound {
				t.Errorf("top took %v to show the station", took)
			}
			start = time.Now()
			p.keys("q")
			p.waitFor("the prompt again", func(s string) bool {
				return strings.Count(s, "prompt$") >= 2 && !strings.Contains(s, "oo-claude top ·")
			})
			if took := time.Since(start); took > hostileBound {
				t.Errorf("top took %v to quit", took)
			}
			for _, p := range paths {
				if fi, err := os.Lstat(p); err != nil || fi.Mode() != modes[p] {
					t.Errorf("%s is no longer the planted %s: %v %v", p, k, fi, err)
				}
				if k == hostile.Foreign || k == hostile.WorldWritable {
					if b, _ := os.ReadFile(p); string(b) != "planted\n" {
						t.Errorf("the %s file %s was written: %q", k, p, b)
					}
				}
			}
			if b, err := os.ReadFile(decoy); err == nil && string(b) != "decoy\n" {
				t.Errorf("written through the symlink: %q", b)
			}
		})
	}
}
