package fakeclaude_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
)

// doormanArgs are the arguments with which the test binary plays the real
// doorman (`oo-claude doorman --mcp`), as the fake claude's MCP server.
var doormanArgs = []string{"doorman", "--mcp"}

// runDoorman is `oo-claude doorman --mcp`: the real doorman, serving MCP
// on stdin and stdout until stdin ends.
func runDoorman() int {
	cfg, err := station.ConfigFromEnv(os.Getenv)
	if err != nil {
		return 2
	}
	dm := doorman.New(doorman.Options{Host: doorman.ThisProcess(cfg, os.Getenv), Config: cfg, Mode: doorman.ModeMCP, Log: os.Stderr, Version: "fakeclaude-test"})
	if err := dm.ServeMCP(context.Background(), &doorman.Server{In: os.Stdin, Out: os.Stdout}); err != nil {
		return 1
	}
	return 0
}

// TestSessionSteerable: a fake claude with Script.Session is a steerable
// session while it runs, as the real CLI with the injected doorman is: its
// registry row names it, the doorman its --mcp-config names follows the
// inbox, and a line sent to it is delivered through its door and confirmed
// on the door's enqueue row. When its input ends it exits 0 and takes the
// row and the doorman with it (the doorman's stopped heartbeat).
func TestSessionSteerable(t *testing.T) {
	f := fakeclaude.Install(t)
	f.Script(fakeclaude.Script{Session: true, Result: "PONG"})
	st := fakestation.New(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const sid = "22222222-2222-4222-8222-222222222222"
	mcp := `{"mcpServers":{"claude-inbox":{"type":"stdio","command":"` + exe + `","args":["doorman","--mcp"]}}}`
	cmd := exec.Command(f.Claude, "-p", "--input-format", "stream-json", "--session-id", sid, "--mcp-config", mcp, "--strict-mcp-config")
	cmd.Dir = st.Root
	cmd.Env = append(st.Env(), "PATH="+os.Getenv("PATH"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		<-exited
	})

	// Steerable: a send is delivered, the ack resting on the receiver's
	// enqueue row. The doorman may still be starting: a generous wait.
	files := inboxv1.FilesFor(st.Paths.InboxDir, sid)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		if h, err := inbox.ReadHeartbeat(files.Heartbeat); err == nil && h.State == inboxv1.StateFollowing && h.SessionID == sid {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no following doorman heartbeat for %s: %v", sid, ctx.Err())
		case <-exited:
			t.Fatalf("the fake claude exited before its doorman followed: %v", waitErr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	row, err := station.ReadRow(filepath.Join(st.Paths.SessionsDir, strconv.Itoa(cmd.Process.Pid)+".json"))
	if err != nil || row.SessionID != sid {
		t.Fatalf("registry row %+v: %v", row, err)
	}
	v, err := (&claudeinbox.Sender{Station: st.Station(), Wait: 30 * time.Second}).Send(ctx, claudeinbox.Request{Target: sid, Line: "steer the fake", From: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Class.Delivered() || v.Confirm != inboxv1.ConfirmTranscript {
		t.Fatalf("send: class %s confirm %q note %s; want delivered, confirmed on the transcript", v.Class, v.Confirm, v.Note)
	}

	stdin.Close()
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("the fake claude: %v", waitErr)
		}
	case <-time.After(time.Minute):
		t.Fatal("the fake claude did not exit after its input ended")
	}
	if _, err := os.Stat(filepath.Join(st.Paths.SessionsDir, strconv.Itoa(cmd.Process.Pid)+".json")); !os.IsNotExist(err) {
		t.Errorf("the registry row is left after a clean exit: %v", err)
	}
	if h, err := inbox.ReadHeartbeat(files.Heartbeat); err != nil || h.State != inboxv1.StateStopped {
		t.Errorf("the doorman's last heartbeat %+v (%v), want stopped", h, err)
	}
}

// ctxT is a context that ends after d or with the test.
func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
