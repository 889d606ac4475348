package repocheck

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/doctor"
	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/fakes/fakeowner"
	"github.com/oo-family/oo-claude/fakes/fakesession"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// receiverTypes are the exported types of the public packages that
// declare exported methods. TestZeroReceivers calls each of their
// exported methods on a zero value.
var receiverTypes = []reflect.Type{
	reflect.TypeFor[claudeinbox.Class](),
	reflect.TypeFor[claudeinbox.Next](),
	reflect.TypeFor[inboxv1.Reason](),
	reflect.TypeFor[claudeinbox.RefusedError](),
	reflect.TypeFor[claudeinbox.Sender](),
	reflect.TypeFor[claudeinbox.Verdict](),

	reflect.TypeFor[doctor.Report](),

	reflect.TypeFor[door.Conn](),
	reflect.TypeFor[door.Dialer](),
	reflect.TypeFor[door.Message](),
	reflect.TypeFor[door.MessageError](),
	reflect.TypeFor[door.OpError](),
	reflect.TypeFor[door.PeerMismatchError](),

	reflect.TypeFor[doorman.DeliveryError](),
	reflect.TypeFor[doorman.DoorDialer](),
	reflect.TypeFor[doorman.Doorman](),
	reflect.TypeFor[doorman.IdentityError](),
	reflect.TypeFor[doorman.Server](),

	reflect.TypeFor[headless.Class](),
	reflect.TypeFor[headless.RefusedError](),
	reflect.TypeFor[headless.Run](),
	reflect.TypeFor[headless.ResumeResult](),
	reflect.TypeFor[headless.Runner](),
	reflect.TypeFor[headless.StartResult](),

	reflect.TypeFor[inboxv1.Ack](),
	reflect.TypeFor[inboxv1.LineError](),
	reflect.TypeFor[inboxv1.NullString](),

	reflect.TypeFor[lineage.By](),
	reflect.TypeFor[lineage.Ledger](),

	reflect.TypeFor[observatory.Document](),

	reflect.TypeFor[receipt.Writer](),

	reflect.TypeFor[station.KnobError](),
	reflect.TypeFor[fleet.Host](),
	reflect.TypeFor[fleet.SSHError](),
	reflect.TypeFor[station.Config](),
	reflect.TypeFor[station.Environ](),
	reflect.TypeFor[station.StationFileError](),
	reflect.TypeFor[station.Paths](),
	reflect.TypeFor[station.Proc](),
	reflect.TypeFor[station.ProcInfo](),
	reflect.TypeFor[station.Station](),
	reflect.TypeFor[station.TargetError](),
	reflect.TypeFor[station.Token](),

	reflect.TypeFor[transcript.Follower](),
	reflect.TypeFor[transcript.Rider](),
	reflect.TypeFor[transcript.Witness](),

	reflect.TypeFor[fakes.Program](),
	reflect.TypeFor[fakeclaude.Fakes](),
	reflect.TypeFor[fakedoor.Door](),
	reflect.TypeFor[fakedoorman.Doorman](),
	reflect.TypeFor[fakemodel.Blocks](),
	reflect.TypeFor[fakemodel.ParseError](),
	reflect.TypeFor[fakemodel.Reply](),
	reflect.TypeFor[fakemodel.Request](),
	reflect.TypeFor[fakemodel.Server](),
	reflect.TypeFor[fakeowner.Child](),
	reflect.TypeFor[fakeowner.Owner](),
	reflect.TypeFor[fakesession.Session](),
	reflect.TypeFor[fakestation.Station](),
}

// receiverExempt are methods TestZeroReceivers does not call, by funcName
// ("pkg.T.M"), each with the reason. Keep it short: a method on a zero
// value refuses (an error, a zero result); it does not panic.
var receiverExempt = map[string]string{
	"fakes.Program.Fatalf": "exits the process with status 1, as documented (a failed program stops)",
	"station.Token.Format": "fmt.Formatter: fmt calls it with its own State; a nil fmt.State is no input a caller gives",
}

// receiverBound bounds one call on a zero receiver: every method
// with a context gets one that ends in callTimeout, so a call that does
// not return within this (generous, for -race on loaded machines) blocks
// on a zero value, and is reported.
const receiverBound = 10 * time.Second

// typeName is "pkg.T" as funcName spells it.
func typeName(t reflect.Type) string {
	const module = "github.com/oo-family/oo-claude"
	pkg := strings.TrimPrefix(strings.TrimPrefix(t.PkgPath(), module), "/")
	if pkg == "" {
		pkg = "."
	}
	return pkg + "." + t.Name()
}

// TestZeroReceivers calls every exported method of the types in
// receiverTypes on a zero value (new(T)), with zero arguments (a context
// that ends soon for a context.Context), and fails on a panic or a call
// that does not return. The calls may refuse; they must not panic. Zero
// values are what the packages promise, as the standard library does; a
// nil pointer is not a receiver they promise anything for.
func TestZeroReceivers(t *testing.T) {
	isolate(t)
	t.Setenv("TMPDIR", t.TempDir()) // where a zero fakes.Program's TempDir goes
	for _, typ := range receiverTypes {
		tn := typeName(typ)
		t.Run(tn, func(t *testing.T) {
			ptr := reflect.PointerTo(typ)
			for i := range ptr.NumMethod() {
				m := ptr.Method(i)
				if _, ok := receiverExempt[tn+"."+m.Name]; ok {
					continue
				}
				callReceiver(t, "(&"+tn+"{})."+m.Name, reflect.New(typ), m)
			}
		})
	}
}

// callReceiver calls method m of the pointer recv with zero arguments,
// under callBounded and receiverBound, reporting a panic or a hang as desc.
func callReceiver(t *testing.T, desc string, recv reflect.Value, m reflect.Method) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	ft := m.Type // the receiver is In(0)
	args := []reflect.Value{recv}
	for i := 1; i < ft.NumIn(); i++ {
		in := ft.In(i)
		if in == reflect.TypeFor[context.Context]() {
			args = append(args, reflect.ValueOf(ctx))
			continue
		}
		args = append(args, reflect.Zero(in))
	}
	callBounded(t, desc, receiverBound, func() {
		if ft.IsVariadic() {
			m.Func.CallSlice(args)
		} else {
			m.Func.Call(args)
		}
	})
}
