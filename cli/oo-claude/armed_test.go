package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
)

// stopAtArmed is the panic of an armed that stops the verb there.
type stopAtArmed struct{}

// runToArmed runs args in process with an armed that stops the verb at
// its call, and reports whether it was called.
func runToArmed(t *testing.T, getenv func(string) string, stdin io.Reader, args ...string) (armed bool) {
	t.Helper()
	p := testProc(getenv)
	p.armed = func() { panic(stopAtArmed{}) }
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopAtArmed); !ok {
				panic(r)
			}
			armed = true
		}
	}()
	// Canceled: a verb that went on unarmed (the failure) ends soon
	// instead of waiting. Not for send, which would end at the cancel
	// before its first write, where it is armed: unarmed, it would write
	// the line and not wait (its station has no doorman).
	ctx, cancel := context.WithCancel(context.Background())
	if len(args) == 0 || args[0] != armsItself {
		cancel()
	}
	defer cancel()
	var out, errb bytes.Buffer
	err := run(ctx, args, stdin, &out, &errb, p)
	t.Logf("%q returned before armed: %v %s", args, err, errb.String())
	return false
}

// TestArmedBeforeWork: no verb writes before the signal handler is
// installed (env.armed; see signalContext), and none but send waits.
// Every verb but send is armed by run after its flags parsed, before its
// Exec; send is armed by its sender just before the send's first write
// (Sender.BeforeWrite), after it read stdin, the registry and the
// heartbeat. The test's armed stops the verb where it is called, so what
// the verb did before it is all it did unarmed: nothing in the station's
// inbox, state or receipts, and, but for send, nothing read from stdin.
func TestArmedBeforeWork(t *testing.T) {
	t.Parallel()
	for _, v := range verbs {
		name := v.name // TestVerbsFor holds it to the command's
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := fakestation.New(t)
			row := fs.AddSession(fakestation.Session{Name: "armed-target"})
			args := []string{name}
			if name == armsItself {
				args = []string{name, row.SessionID, "-", "--min-interval", "0"}
			}
			stdin := &watchedReader{r: strings.NewReader("ping\n")}
			if !runToArmed(t, fs.Getenv, stdin, args...) {
				t.Fatalf("%s: the verb returned without waiting for the signal handler", name)
			}
			if stdin.read != (name == armsItself) {
				t.Errorf("%s: stdin read before the handler was armed: %v", name, stdin.read)
			}
			for _, dir := range []string{fs.Paths.InboxDir, fs.Paths.StateDir, fs.Paths.ObservatoryDir} {
				if ents, err := os.ReadDir(dir); err != nil || len(ents) > 0 {
					t.Errorf("%s: %s before the handler was armed: %v %v", name, dir, ents, err)
				}
			}
		})
	}
	// Armed, send goes on and delivers the line it read from stdin; the
	// inbox holds nothing until then.
	t.Run("send delivers once armed", func(t *testing.T) {
		t.Parallel()
		fs := fakestation.New(t)
		row := fs.AddSession(fakestation.Session{Name: "armed-target"})
		fakedoorman.Start(t, fs.Paths.InboxDir, row.SessionID, fakedoorman.Options{OwnerPID: row.PID})
		stdin := &watchedReader{r: strings.NewReader("ping\n")}
		p := testProc(fs.Getenv)
		armedBeforeWrite := false
		p.armed = func() {
			b, _ := os.ReadFile(inboxv1.FilesFor(fs.Paths.InboxDir, row.SessionID).Inbox)
			armedBeforeWrite = !bytes.Contains(b, []byte("ping"))
		}
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"send", row.SessionID, "-", "--min-interval", "0"}, stdin, &out, &errb, p)
		if code := exitCode(err, &errb); code != 0 || !strings.HasPrefix(out.String(), "delivered-") {
			t.Fatalf("exit %d, stdout %q, stderr %q; want delivered", code, out.String(), errb.String())
		}
		if !armedBeforeWrite || !stdin.read {
			t.Errorf("armed before the inbox was written: %v; stdin read: %v", armedBeforeWrite, stdin.read)
		}
	})
}

// watchedReader records whether it was read.
type watchedReader struct {
	r    io.Reader
	read bool
}

func (w *watchedReader) Read(p []byte) (int, error) {
	w.read = true
	return w.r.Read(p)
}
