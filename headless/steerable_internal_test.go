package headless

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/station"
)

// A detached start whose doorman follows before its supervisor has written
// claude's pid is not yet steerable by its file: the wait returns the file
// only with the pid in it (the race a start --detach lost under load, which
// printed a started file with "pid": null).
func TestAwaitSteerableWaitsForClaudesPID(t *testing.T) {
	fs := fakestation.New(t)
	r := &Runner{Config: station.DefaultConfig(fs.Paths)}
	sid := uuid.NewString()
	f := StartFile{State: Started, SessionID: sid, ResultFile: filepath.Join(t.TempDir(), "r.json"), TimeoutS: 60}
	r.recordSupervisor(&f)
	if err := writeFile(&f); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(fs.Paths.InboxDir, 0o700); err != nil {
		t.Fatal(err)
	}
	dm := fakedoorman.Start(t, fs.Paths.InboxDir, sid, fakedoorman.Options{})
	defer dm.Stop()
	if !r.steerable(sid) {
		t.Fatal("the fake doorman's heartbeat is not fresh")
	}

	// The doorman follows, the file has no pid: a wait that can only look
	// once (its context is over) does not call it steerable.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := r.awaitSteerable(done, StartResult{File: f})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("awaitSteerable = %+v, %v with no pid in the file; want it to wait (here: context canceled)", got.File, err)
	}

	// A wait begun before the pid is written returns the file with it
	// once it is (the file's write wakes it).
	type answer struct {
		res StartResult
		err error
	}
	ch, before := make(chan answer, 1), StartResult{File: f}
	go func() {
		res, err := r.awaitSteerable(context.Background(), before)
		ch <- answer{res, err}
	}()
	f.PID = jsonrow.Ptr(os.Getpid())
	if err := writeFile(&f); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-ch:
		if a.err != nil || a.res.File.PID == nil || *a.res.File.PID != os.Getpid() {
			t.Fatalf("awaitSteerable = %+v, %v; want the file with claude's pid", a.res.File, a.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("awaitSteerable did not return within 30 s of the pid's write")
	}
}
