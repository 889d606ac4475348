// Command roundtrip is oo-claude's self-contained demo: a whole steer on a
// station in a temporary directory, with no Claude Code installed.
//
// This process plays the Claude Code session: it writes a registry row for
// its own pid, listens on the session's door (a real Unix socket that
// records every frame with its writer's pid, as the real receiver would see
// it, and appends the receiver's enqueue row of each line it queues to the
// session's transcript, as Claude Code does) and starts the doorman as its direct child, with the environment
// Claude Code gives its MCP servers. The child runs the real doorman code
// unmodified: it finds its owner from the process tree, checks the door's
// listener with SO_PEERCRED and carries each inbox line through the door.
// Then claudeinbox.Send appends lines and waits for their acks, exactly as
// `oo-claude send` does, and the demo prints what each side saw.
//
//	go run ./examples/roundtrip
//
// It exits 1 when any step does not hold.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// roleEnv marks the child that plays the doorman.
const roleEnv = "OO_CLAUDE_ROUNDTRIP_ROLE"

func main() {
	log.SetFlags(0)
	log.SetPrefix("roundtrip: ")
	if os.Getenv(roleEnv) == "doorman" {
		os.Exit(runDoorman())
	}
	if err := run(os.Stdout); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// runDoorman is the child: the same wiring as `oo-claude doorman --mcp`,
// minus the MCP server (nobody speaks MCP to it here).
func runDoorman() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := station.ConfigFromEnv(os.Getenv)
	if err != nil {
		log.Print(err)
		return 2
	}
	dm := doorman.New(doorman.Options{
		Host:   doorman.ThisProcess(cfg, os.Getenv),
		Config: cfg, Mode: doorman.ModeMCP, Log: os.Stderr, Version: "roundtrip",
	})
	if err := dm.Run(ctx); err != nil {
		log.Print(err)
		return 3
	}
	return 0
}

func run(out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The fakes take a fakes.TB; outside a test a fakes.Program is one,
	// and closing it removes what they made.
	t := &fakes.Program{}
	defer t.Close()

	// The session: a registry row for this process, its door and its key.
	// The door writes the receiver's enqueue row of each line it queues
	// into the session's transcript, as Claude Code does: the doorman acks
	// a line only once that row shows it was queued.
	st := fakestation.New(t)
	sid, cwd := uuid.NewString(), st.Root
	// Witness.Mark names the transcript Claude Code will write for it.
	tp, _, err := transcript.Witness{ProjectsDir: st.Paths.ProjectsDir}.Mark(sid, cwd)
	if err != nil {
		return err
	}
	door, err := fakedoor.Listen("", fakedoor.Options{SessionID: sid, Transcript: tp})
	if err != nil {
		return err
	}
	defer door.Close()
	row := st.AddSession(fakestation.Session{PID: os.Getpid(), SessionID: sid, CWD: cwd, Socket: door.Path(), Status: station.StatusBusy, Name: "roundtrip-demo"})
	var key [16]byte
	rand.Read(key[:])
	token := hex.EncodeToString(key[:])
	st.WriteKey(row, token)
	fmt.Fprintf(out, "session   %s  pid %d (this process)  door %s\n", row.SessionID, row.PID, row.MessagingSocketPath)

	// The doorman: this program again, as the session's direct child, with
	// what Claude Code puts in an MCP server's environment.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self)
	child.Env = append(st.Env(), roleEnv+"=doorman",
		"CLAUDECODE=1",
		"CLAUDE_CODE_SESSION_ID="+row.SessionID,
		"CLAUDE_CODE_MESSAGING_SOCKET="+row.MessagingSocketPath,
		"CLAUDE_CODE_MESSAGING_TOKEN="+token,
	)
	var childErr lockedBuffer // the doorman's log, read while it runs
	child.Stderr = &childErr
	if err := child.Start(); err != nil {
		return err
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
	}()
	hb, err := waitHeartbeat(ctx, st.Paths.InboxDir, row.SessionID, func(h inboxv1.Heartbeat) bool {
		return h.State == inboxv1.StateFollowing
	})
	if err != nil {
		return fmt.Errorf("doorman did not start: %w\n%s", err, childErr.String())
	}
	fmt.Fprintf(out, "doorman   pid %d  state %s  owner %d  peer %d\n", hb.PID, hb.State, hb.OwnerPID, hb.PeerPID)

	// The sender: the library call behind `oo-claude send`.
	cfg, err := station.ConfigFromEnv(st.Getenv)
	if err != nil {
		return err
	}
	sender := claudeinbox.NewSender(cfg)
	var failures []string
	check := func(ok bool, format string, a ...any) {
		if !ok {
			failures = append(failures, fmt.Sprintf(format, a...))
		}
	}
	for i, step := range []struct {
		status string
		from   string
		line   string
		want   claudeinbox.Class
	}{
		// Two senders: the throttle allows one line per target and sender
		// every 30 s.
		{station.StatusBusy, "mama", "please also run the linter", claudeinbox.DeliveredSteer},
		{station.StatusIdle, "omi", "the review is done, have a look", claudeinbox.DeliveredStart},
	} {
		st.SetStatus(row.PID, step.status)
		v, err := sender.Send(ctx, claudeinbox.Request{Target: "roundtrip", Line: step.line, From: step.from})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "send      %-15s session %s  offset %d  msg_id %s  after %v\n",
			v.Class, step.status, v.LineOffset, v.MsgID, v.Waited.Round(time.Millisecond))
		if v.Class != step.want {
			return fmt.Errorf("send %d: class %s (%s), want %s\ndoorman's log:\n%s", i+1, v.Class, v.Reason, step.want, childErr.String())
		}
		if _, err := door.WaitFrames(ctx, 2*(i+1)); err != nil {
			return fmt.Errorf("door: %w", err)
		}
		var f fakedoor.Frame
		for _, fr := range door.Frames() {
			if fr.Type == "user" {
				f = fr
			}
		}
		fmt.Fprintf(out, "door      frame from pid %d  msg_id %s  %q\n", f.PeerPID, f.MsgID, f.Content)
		check(f.PeerPID == child.Process.Pid, "frame writer pid %d, want the doorman %d", f.PeerPID, child.Process.Pid)
		check(f.MsgID == v.MsgID, "frame msg_id %s, ack msg_id %s", f.MsgID, v.MsgID)
		check(f.Content == v.Line, "frame content %q, line %q", f.Content, v.Line)
	}

	// The stop: Claude Code ends its MCP servers with SIGINT.
	start := time.Now()
	child.Process.Signal(os.Interrupt)
	hb, err = waitHeartbeat(ctx, st.Paths.InboxDir, row.SessionID, func(h inboxv1.Heartbeat) bool {
		return h.State == inboxv1.StateStopped
	})
	if err != nil {
		return fmt.Errorf("no stopped heartbeat: %w", err)
	}
	fmt.Fprintf(out, "stop      SIGINT → heartbeat %s after %v, %d delivered\n", hb.State, time.Since(start).Round(time.Millisecond), hb.Delivered)
	check(hb.Delivered == 2, "heartbeat counts %d delivered, want 2", hb.Delivered)
	for _, f := range door.Frames() {
		check(f.Type != "auth" || f.Token.Reveal() == token, "auth frame with a foreign token")
	}
	if len(failures) > 0 {
		for _, f := range failures {
			fmt.Fprintln(out, "FAIL      "+f)
		}
		return errors.New("the round trip did not hold")
	}
	fmt.Fprintln(out, "ok        every line was carried by the session's own child and acked with the msg_id the door received")
	return nil
}

// waitHeartbeat polls the heartbeat file (a demo may poll) until ok holds.
func waitHeartbeat(ctx context.Context, inboxDir, sid string, ok func(inboxv1.Heartbeat) bool) (inboxv1.Heartbeat, error) {
	for {
		h, err := readHeartbeat(inboxDir, sid)
		if err == nil && h.SessionID == sid && ok(h) {
			return h, nil
		}
		select {
		case <-ctx.Done():
			return h, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// readHeartbeat reads session sid's heartbeat in the inbox dir,
// <session id>.inbox.doorman.json.
func readHeartbeat(inboxDir, sid string) (inboxv1.Heartbeat, error) {
	var h inboxv1.Heartbeat
	b, err := os.ReadFile(filepath.Join(inboxDir, sid+".inbox.doorman.json"))
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	return h, err
}

// lockedBuffer is a bytes.Buffer that one goroutine may write (the child's
// stderr copy) while another reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
