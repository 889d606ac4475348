package repocheck

import (
	"context"
	"go/ast"
	"go/token"
	"maps"
	"reflect"
	"slices"
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

// receiverTypes is every exported type of the public packages that
// declares an exported method (TestReceiversComplete holds the table to
// the source). TestZeroReceivers calls each of their exported methods on
// a zero value and, for the pointer-receiver ones, on a nil pointer.
var receiverTypes = []reflect.Type{
	reflect.TypeFor[claudeinbox.Class](),
	reflect.TypeFor[claudeinbox.Next](),
	reflect.TypeFor[inboxv1.Reason](),
	reflect.TypeFor[claudeinbox.RefusedError](),
	reflect.TypeFor[claudeinbox.SendError](),
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

	reflect.TypeFor[lineage.By](),
	reflect.TypeFor[lineage.Error](),
	reflect.TypeFor[lineage.Ledger](),

	reflect.TypeFor[observatory.Error](),
	reflect.TypeFor[observatory.Document](),

	reflect.TypeFor[receipt.Error](),
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

	reflect.TypeFor[transcript.Error](),
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

// receiverAliases is every exported alias of the public packages (type A
// = other.T), by "pkg.A": the methods of an alias's type are the public
// package's too. TestZeroReceivers sweeps those that have any, as it
// sweeps receiverTypes; TestReceiversComplete holds the map to the source.
var receiverAliases = map[string]reflect.Type{
	"claudeinbox.Reply":         reflect.TypeFor[receipt.Reply](),
	"doorman.State":             reflect.TypeFor[inboxv1.State](),
	"doorman.Heartbeat":         reflect.TypeFor[inboxv1.Heartbeat](),
	"observatory.PendingSource": reflect.TypeFor[inboxv1.PendingSource](),
	"observatory.Inbox":         reflect.TypeFor[inboxv1.Inbox](),
	"observatory.Doorman":       reflect.TypeFor[inboxv1.Doorman](),
	"observatory.NullString":    reflect.TypeFor[inboxv1.NullString](),
	"transcript.Reply":          reflect.TypeFor[receipt.Reply](),
	"fakes/fakeowner.Files":     reflect.TypeFor[inboxv1.Files](),
	"fakes/fakeowner.Ack":       reflect.TypeFor[inboxv1.Ack](),
	"fakes/fakeowner.AckClass":  reflect.TypeFor[inboxv1.AckClass](),
	"fakes/fakeowner.Heartbeat": reflect.TypeFor[inboxv1.Heartbeat](),
}

// receiverExempt are methods TestZeroReceivers does not call, by funcName
// ("pkg.T.M"), each with the reason. Keep it short: a method on a zero
// value or a nil pointer refuses (an error, a zero result); it does not
// panic.
var receiverExempt = map[string]string{
	"fakes.Program.Fatalf": "exits the process with status 1, as documented (a failed program stops)",
	"station.Token.Format": "fmt.Formatter: fmt calls it with its own State; a nil fmt.State is no input a caller gives",
}

// receiverNilExempt are methods TestZeroReceivers calls on a zero value
// but not on a nil pointer, each with the reason (documented on the type).
var receiverNilExempt = map[string]string{
	"fakes.Program.Cleanup": "a nil *Program keeps nothing: it stops the program through Fatalf (exit 1)",
	"fakes.Program.TempDir": "a nil *Program keeps nothing: it stops the program through Fatalf (exit 1)",
}

// errorType is the error interface. A nil pointer of an error type is not
// called: a package returns its errors as non-nil pointers (a nil error is
// the nil interface), and errors.As fills only non-nil ones, so no caller
// holds a nil *E (as with *os.PathError). Their zero values are called.
var errorType = reflect.TypeFor[error]()

// receiverBound bounds one call on a zero or nil receiver: every method
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

// TestZeroReceivers calls every exported method of every exported type of
// the public packages on a zero value (new(T)) and, when the method has a
// pointer receiver and T is not an error type (errorType), on a nil *T,
// with zero arguments (a context that ends
// soon for a context.Context), and fails on a panic or a call that does
// not return. The calls may refuse; they must not panic.
func TestZeroReceivers(t *testing.T) {
	isolate(t)
	t.Setenv("TMPDIR", t.TempDir())    // where a zero fakes.Program's TempDir goes
	names := map[reflect.Type]string{} // as a user spells the type
	var sweep []reflect.Type
	for _, typ := range receiverTypes {
		names[typ] = typeName(typ)
		sweep = append(sweep, typ)
	}
	for _, a := range slices.Sorted(maps.Keys(receiverAliases)) {
		typ := receiverAliases[a]
		if _, dup := names[typ]; !dup && reflect.PointerTo(typ).NumMethod() > 0 {
			names[typ] = a
			sweep = append(sweep, typ)
		}
	}
	for _, typ := range sweep {
		tn := names[typ]
		t.Run(tn, func(t *testing.T) {
			ptr := reflect.PointerTo(typ)
			for i := range ptr.NumMethod() {
				m := ptr.Method(i)
				name := tn + "." + m.Name
				if _, ok := receiverExempt[name]; ok {
					continue
				}
				callReceiver(t, "(&"+tn+"{})."+m.Name, reflect.New(typ), m)
				_, onValue := typ.MethodByName(m.Name)
				if _, exempt := receiverNilExempt[name]; !onValue && !exempt && !ptr.Implements(errorType) {
					// A value method cannot be called through a nil
					// pointer: the language dereferences it first.
					callReceiver(t, "(*"+tn+")(nil)."+m.Name, reflect.Zero(ptr), m)
				}
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

// TestReceiversComplete: every exported type of the public packages that
// declares an exported method is in receiverTypes, every exported method
// is in its method set (so TestZeroReceivers calls it), every exported
// alias is in receiverAliases, and every name in receiverTypes,
// receiverAliases, receiverExempt and receiverNilExempt still exists; a
// new type or alias must be added to the tables.
func TestReceiversComplete(t *testing.T) {
	table := map[string]reflect.Type{}
	for _, typ := range receiverTypes {
		table[typeName(typ)] = typ
	}
	declared := map[string]bool{}
	methods := map[string]bool{}
	aliases := map[string]bool{}
	for _, p := range publicPackages(t, moduleRoot(t)) {
		for _, s := range genSpecs(p.files, token.TYPE) {
			if ts := s.(*ast.TypeSpec); ts.Assign.IsValid() && ts.Name.IsExported() {
				aliases[p.path+"."+ts.Name.Name] = true
			}
		}
		for _, fd := range p.exportedFuncs() {
			if fd.Recv == nil {
				continue
			}
			tn, name := p.path+"."+recvType(fd), funcName(p.path, fd)
			declared[tn], methods[name] = true, true
			typ, ok := table[tn]
			if !ok {
				continue // reported once below
			}
			if _, ok := reflect.PointerTo(typ).MethodByName(fd.Name.Name); !ok {
				t.Errorf("%s: declared but not in the method set of *%s; is the table's type the declared one?", name, tn)
			}
		}
	}
	var missing []string
	for tn := range declared {
		if _, ok := table[tn]; !ok {
			missing = append(missing, tn)
		}
	}
	slices.Sort(missing)
	for _, tn := range missing {
		t.Errorf("%s: an exported type with exported methods missing from receiverTypes (receivers_test.go); add reflect.TypeFor[%s]()", tn, tn[strings.LastIndex(tn, "/")+1:])
	}
	for tn := range table {
		if !declared[tn] {
			t.Errorf("%s: in receiverTypes but not an exported type declaring an exported method of a public package; remove it", tn)
		}
	}
	for a := range aliases {
		if _, ok := receiverAliases[a]; !ok {
			t.Errorf("%s: an exported alias missing from receiverAliases (receivers_test.go); add it", a)
		}
	}
	for a := range receiverAliases {
		if !aliases[a] {
			t.Errorf("%s: in receiverAliases but not an exported alias of a public package; remove it", a)
		}
	}
	for _, exempt := range []map[string]string{receiverExempt, receiverNilExempt} {
		for name := range exempt {
			if !methods[name] {
				t.Errorf("%s: exempt in receivers_test.go but not an exported method of a public package; remove it", name)
			}
		}
	}
	if len(declared) < 20 {
		t.Errorf("found only %d exported types with methods; is the parser reading the packages?", len(declared))
	}
}
