package doorman_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/station"
)

// TestZeroInputsDoNotPanic: the exported constructors and entry points
// take zero and nil inputs with an error or a usable default, never a
// panic (doorman.New without a Host used to dereference it).
func TestZeroInputsDoNotPanic(t *testing.T) {
	w := newWorld(t)
	enabled := station.DefaultConfig(w.fs.Paths)
	tests := []struct {
		name    string
		o       doorman.Options
		wantErr bool
		state   inboxv1.State
	}{
		{"zero options: silenced", doorman.Options{Once: true}, false, inboxv1.StateSilenced},
		{"no host: this process, no environment", doorman.Options{Config: enabled, Once: true, Mode: doorman.ModeMCP}, true, inboxv1.StateNotDescendant},
		{"zero host", doorman.Options{Host: &doorman.Host{}, Config: enabled, Once: true}, true, inboxv1.StateNotDescendant},
		{"host without station or door", doorman.Options{Host: &doorman.Host{Proc: w.tree.proc(), PID: selfPID}, Config: enabled, Once: true}, true, inboxv1.StateNotDescendant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dm := doorman.New(tt.o)
			err := dm.Run(context.Background())
			if (err != nil) != tt.wantErr {
				t.Fatalf("Run = %v, want error %v", err, tt.wantErr)
			}
			if got := dm.Status().State; got != tt.state {
				t.Errorf("state %q, want %q", got, tt.state)
			}
			_ = dm.Report()
		})
	}
	t.Run("server without stdio", func(t *testing.T) {
		if err := (&doorman.Server{}).Serve(context.Background()); err == nil {
			t.Error("Serve without In and Out: no error")
		}
		dm := doorman.New(doorman.Options{})
		if err := dm.ServeMCP(context.Background(), nil); err == nil {
			t.Error("ServeMCP(nil): no error")
		}
		if err := dm.ServeMCP(context.Background(), &doorman.Server{In: strings.NewReader("")}); err == nil {
			t.Error("ServeMCP without Out: no error")
		}
		var out bytes.Buffer
		if err := dm.ServeMCP(context.Background(), &doorman.Server{In: strings.NewReader(""), Out: &out}); err != nil {
			t.Errorf("ServeMCP at EOF: %v", err)
		}
	})
	var zero doorman.DoorDialer
	if _, err := zero.Peer(context.Background(), ""); err == nil {
		t.Error("DoorDialer.Peer of no socket: no error")
	}
}

// TestDoorDialerSettleMeansWhatDoorSays: a zero DoorDialer.Settle is
// door's default settle, as in door.Dialer (it used to mean none), so a
// refusal within it is seen; door.NoSettle is none.
func TestDoorDialerSettleMeansWhatDoorSays(t *testing.T) {
	fd := fakedoor.New(t, fakedoor.Options{})
	fd.Refuse(true)
	m := door.Message{SessionID: uuid.NewString(), From: "t", MsgID: uuid.NewString(), Text: "x"}
	if _, err := (doorman.DoorDialer{}).Deliver(context.Background(), fd.Path(), os.Getpid(), m, true); !errors.Is(err, door.ErrRefused) {
		t.Errorf("zero Settle: err %v, want ErrRefused (the default settle sees the close)", err)
	}
	if _, err := (doorman.DoorDialer{Settle: door.NoSettle}).Deliver(context.Background(), fd.Path(), os.Getpid(), m, true); err != nil {
		t.Errorf("NoSettle: err %v, want none (no settle, the close unseen)", err)
	}
}

// TestThisProcessMapsTheSettleKnob: OO_CLAUDE_DOOR_SETTLE_S keeps its
// meaning (0: no settle) now that a zero DoorDialer.Settle is door's
// default: ThisProcess, where the knob is read, maps it.
func TestThisProcessMapsTheSettleKnob(t *testing.T) {
	for _, tt := range []struct {
		knob string
		want time.Duration
	}{{"", 250 * time.Millisecond}, {"0", door.NoSettle}, {"0.05", 50 * time.Millisecond}} {
		cfg, err := station.ConfigFromEnv(func(k string) string {
			if k == "OO_CLAUDE_DOOR_SETTLE_S" {
				return tt.knob
			}
			if k == "HOME" {
				return "/home/u"
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		dd, ok := doorman.ThisProcess(cfg, nil).Door.(doorman.DoorDialer)
		if !ok || dd.Settle != tt.want {
			t.Errorf("OO_CLAUDE_DOOR_SETTLE_S=%q: door %#v, want a DoorDialer settling %v", tt.knob, dd, tt.want)
		}
	}
}

// TestDoormanNotFromNew: a Doorman not made by New (the zero value) runs
// nothing: Run and ServeMCP return an error at once (the zero value's Run
// dereferenced its missing Host).
func TestDoormanNotFromNew(t *testing.T) {
	for name, d := range map[string]*doorman.Doorman{"zero": {}} {
		t.Run(name, func(t *testing.T) {
			if err := d.Run(context.Background()); err == nil {
				t.Error("Run: no error")
			}
			srv := &doorman.Server{In: strings.NewReader(""), Out: &bytes.Buffer{}}
			if err := d.ServeMCP(context.Background(), srv); err == nil {
				t.Error("ServeMCP: no error")
			}
		})
	}
	var srv doorman.Server
	if err := srv.Serve(context.Background()); err == nil {
		t.Error("zero Server: Serve returned nil")
	}
}
