package lineage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/lineage"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	child  = "11111111-1111-4111-8111-111111111111"
	p1     = "22222222-2222-4222-8222-222222222222"
	p2     = "33333333-3333-4333-8333-333333333333"
	p1Host = "local_2222aaaa-bbbb"
)

func s(v string) *string { return &v }

func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func TestRegisterSequence(t *testing.T) {
	type step struct {
		link     lineage.Link
		appended bool
		err      error
	}
	tests := []struct {
		name  string
		steps []step
		want  []lineage.Row // Links() afterwards, without ts
		lines int
	}{
		{
			name:  "first link appends",
			steps: []step{{link: lineage.Link{Child: child, Parent: p1, Title: "t"}, appended: true}},
			want:  []lineage.Row{{ChildSession: child, ParentSession: s(p1), Title: "t", By: lineage.ByChild}},
			lines: 1,
		},
		{
			name: "same parent twice is idempotent",
			steps: []step{
				{link: lineage.Link{Child: child, Parent: p1}, appended: true},
				{link: lineage.Link{Child: child, Parent: p1, By: lineage.ByParent}, appended: false},
			},
			want:  []lineage.Row{{ChildSession: child, ParentSession: s(p1), By: lineage.ByChild}},
			lines: 1,
		},
		{
			name: "an earlier parent again appends again and wins",
			steps: []step{
				{link: lineage.Link{Child: child, Parent: p1}, appended: true},
				{link: lineage.Link{Child: child, Parent: p2}, appended: true},
				{link: lineage.Link{Child: child, Parent: p1}, appended: true},
			},
			want:  []lineage.Row{{ChildSession: child, ParentSession: s(p1), By: lineage.ByChild}},
			lines: 3,
		},
		{
			name: "host-only parent is idempotent on the host id",
			steps: []step{
				{link: lineage.Link{Child: child, Parent: p1Host}, appended: true},
				{link: lineage.Link{Child: child, Parent: p1Host}, appended: false},
			},
			want:  []lineage.Row{{ChildSession: child, ParentHost: s(p1Host), By: lineage.ByChild}},
			lines: 1,
		},
		{
			name: "refusals append nothing",
			steps: []step{
				{link: lineage.Link{Child: child}, err: lineage.ErrNoParent},
				{link: lineage.Link{Parent: p1}, err: lineage.ErrNoChild},
				{link: lineage.Link{Child: "../x", Parent: p1}, err: lineage.ErrBadID},
				{link: lineage.Link{Child: child, Parent: "bogus"}, err: lineage.ErrBadID},
				{link: lineage.Link{Child: child, Parent: child}, err: lineage.ErrSelfChild},
				{link: lineage.Link{Child: child, Parent: p1, By: "mama"}, err: lineage.ErrBadBy},
				{link: lineage.Link{Child: child, Parent: p1, Title: "a\nb"}, err: lineage.ErrBadTitle},
				{link: lineage.Link{ChildHost: "local_99999999", Parent: p1}, err: lineage.ErrNoChild},
			},
			want: []lineage.Row{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &lineage.Ledger{Path: filepath.Join(t.TempDir(), "obs", "lineage.jsonl"), Now: fixedClock()}
			for i, st := range tt.steps {
				res, err := l.Register(context.Background(), st.link)
				if !errors.Is(err, st.err) {
					t.Fatalf("step %d: err %v, want %v", i, err, st.err)
				}
				var le *fs.PathError
				if err != nil && !errors.As(err, &le) {
					t.Fatalf("step %d: err %T is not *fs.PathError", i, err)
				}
				if res.Appended != st.appended {
					t.Errorf("step %d: appended %v, want %v", i, res.Appended, st.appended)
				}
			}
			got, err := l.Links(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i].TS = ""
			}
			if got == nil {
				got = []lineage.Row{}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("links (-want +got):\n%s", d)
			}
			rows, _ := l.Rows(context.Background())
			if len(rows) != tt.lines {
				t.Errorf("%d lines, want %d", len(rows), tt.lines)
			}
			if tt.lines > 0 {
				fi, err := os.Stat(l.Path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("ledger mode %v, want 0600", fi.Mode().Perm())
				}
			}
		})
	}
}

func TestRegisterFillsFromRegistry(t *testing.T) {
	fs := fakestation.New(t)
	// The parent runs as a desktop session (this test process stands in
	// for its claude process).
	fs.AddSession(fakestation.Session{SessionID: p1, HostSessionID: p1Host, Entrypoint: "claude-desktop"})
	l := &lineage.Ledger{Path: fs.Paths.LineageFile(), Sessions: fs.Station(), Now: fixedClock()}

	res, err := l.Register(context.Background(), lineage.Link{Child: child, Parent: p1Host, By: lineage.ByParent})
	if err != nil {
		t.Fatal(err)
	}
	want := lineage.Row{TS: "2026-11-30T12:00:01.000Z", ChildSession: child, ParentHost: s(p1Host), ParentSession: s(p1), By: lineage.ByParent}
	if d := cmp.Diff(want, res.Row); d != "" {
		t.Errorf("row (-want +got):\n%s", d)
	}
	// The same parent named by its session id is the same link.
	res, err = l.Register(context.Background(), lineage.Link{Child: child, Parent: p1})
	if err != nil || res.Appended {
		t.Errorf("re-register by session id: appended %v, err %v", res.Appended, err)
	}
	b, _ := os.ReadFile(l.Path)
	wantLine := `{"ts":"2026-11-30T12:00:01.000Z","child_host":null,"child_session":"` + child +
		`","parent_host":"` + p1Host + `","parent_session":"` + p1 + `","title":"","by":"parent"}` + "\n"
	if d := cmp.Diff(wantLine, string(b)); d != "" {
		t.Errorf("ledger (-want +got):\n%s", d)
	}
}

func TestRegisterConcurrent(t *testing.T) {
	l := &lineage.Ledger{Path: filepath.Join(t.TempDir(), "lineage.jsonl")}
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.Register(context.Background(), lineage.Link{Child: child, Parent: p1}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	rows, err := l.Rows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Errorf("%d rows after 16 concurrent registrations of one link, want 1", len(rows))
	}
}

func TestParseRowsLenient(t *testing.T) {
	row := func(parent string) string {
		return "{\"child_session\":\"" + child + "\",\"parent_session\":\"" + parent + "\"}"
	}
	tests := []struct {
		name string
		in   string
		want []lineage.Row
	}{
		{
			name: "garbage, a row without child and a torn last line are skipped",
			in:   "garbage\n{\"child_session\":\"" + child + "\",\"by\":\"child\"}\n{\"ts\":1}\n" + row(p2) + "\n{\"child_sess",
			want: []lineage.Row{{ChildSession: child, ParentSession: s(p2)}},
		},
		{
			// A bufio.Scanner with a 1 MiB limit stopped at this line and
			// lost every row after it.
			name: "a line over 1 MiB does not hide the rows after it",
			in:   row(p1) + "\n{\"title\":\"" + strings.Repeat("x", 2<<20) + "\"}\n" + row(p2) + "\n",
			want: []lineage.Row{{ChildSession: child, ParentSession: s(p2)}},
		},
		{
			name: "CRLF line ends",
			in:   row(p1) + "\r\n" + row(p2) + "\r\n",
			want: []lineage.Row{{ChildSession: child, ParentSession: s(p2)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lineage.Current(lineage.ParseRows([]byte(tt.in)))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ParseRows never loses a row to the lines before it, Current keeps
// exactly one row per child (the newest), and the ledger's own reader
// (Rows, Links) gives what they give.
func FuzzParseRows(f *testing.F) {
	f.Add([]byte(`{"ts":"x","child_host":null,"child_session":"` + child + `","parent_host":null,"parent_session":null,"title":"","by":"child"}` + "\n"))
	f.Add([]byte("{\n}\n{\"child_session\":1}"))
	f.Add([]byte("{\"title\":\"" + strings.Repeat("x", 70000) + "\"}"))
	last := lineage.Row{TS: "t", ChildSession: child, ParentSession: s(p2), Title: "last", By: lineage.ByChild}
	lastLine, err := json.Marshal(last)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows := lineage.ParseRows(b)
		cur := lineage.Current(rows)
		seen := map[string]bool{}
		for _, r := range cur {
			if r.ChildSession == "" {
				t.Fatal("row without child")
			}
			if seen[r.ChildSession] {
				t.Fatalf("child %q twice in Current", r.ChildSession)
			}
			seen[r.ChildSession] = true
		}
		if len(cur) > len(rows) {
			t.Fatalf("Current made %d rows out of %d", len(cur), len(rows))
		}
		// The ledger's streaming reader agrees with the model: Rows are
		// the parsed rows, Links their newest per child (lines within the
		// reader's 64 KiB bound; it skips longer ones).
		if !slices.ContainsFunc(bytes.Split(b, []byte("\n")), func(l []byte) bool { return len(l) > 64<<10 }) {
			l := &lineage.Ledger{Path: filepath.Join(t.TempDir(), "lineage.jsonl")}
			if err := os.WriteFile(l.Path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			gotRows, err := l.Rows(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(rows, gotRows, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("Ledger.Rows vs ParseRows (-model +ledger):\n%s", d)
			}
			links, err := l.Links(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(cur, links, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("Ledger.Links vs Current (-model +ledger):\n%s", d)
			}
		}
		// Whatever came before, a whole row appended after it is read
		// and is its child's current link.
		with := append(append(append([]byte{}, b...), '\n'), lastLine...)
		got := lineage.ParseRows(append(with, '\n'))
		if len(got) != len(rows)+1 {
			t.Fatalf("%d rows after appending one to %d", len(got), len(rows))
		}
		if d := cmp.Diff(last, got[len(got)-1]); d != "" {
			t.Fatalf("appended row (-want +got):\n%s", d)
		}
	})
}

func ExampleLedger_Register() {
	dir, _ := os.MkdirTemp("", "lineage-example")
	defer os.RemoveAll(dir)
	l := &lineage.Ledger{
		Path: filepath.Join(dir, "lineage.jsonl"),
		Now:  func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	}
	ctx := context.Background()
	r1, _ := l.Register(ctx, lineage.Link{Child: child, Parent: p1, Title: "worker", By: lineage.ByParent})
	r2, _ := l.Register(ctx, lineage.Link{Child: child, Parent: p1, By: lineage.ByChild})
	fmt.Println(r1.Appended, r2.Appended)
	links, _ := l.Links(context.Background())
	for _, r := range links {
		fmt.Println(r.ChildSession[:8], "<-", *r.ParentSession, r.By, r.Title)
	}
	// Output:
	// true false
	// 11111111 <- 22222222-2222-4222-8222-222222222222 parent worker
}

// TestZeroLedger: the zero Ledger, with no Path, registers nothing (an
// error) and reads no rows.
func TestZeroLedger(t *testing.T) {
	for name, l := range map[string]*lineage.Ledger{"zero": {}} {
		t.Run(name, func(t *testing.T) {
			link := lineage.Link{Child: "6c2b1c1e-4b7a-4f7e-9d2a-1a2b3c4d5e6f", Parent: "0b0e3c1a-2d4f-4a6b-8c9d-0e1f2a3b4c5d", By: lineage.ByParent}
			var le *fs.PathError
			if _, err := l.Register(context.Background(), link); !errors.As(err, &le) {
				t.Errorf("Register: %v, want an *fs.PathError", err)
			}
			if rows, err := l.Rows(context.Background()); len(rows) != 0 || err != nil {
				t.Errorf("Rows = %v, %v; want none", rows, err)
			}
			if rows, err := l.Links(context.Background()); len(rows) != 0 || err != nil {
				t.Errorf("Links = %v, %v; want none", rows, err)
			}
			if _, ok, err := l.Parent(context.Background(), link.Child); ok || err != nil {
				t.Errorf("Parent: ok %v, err %v; want none", ok, err)
			}
		})
	}
}

// TestReadsTakeContext: a read of a ledger stops when its context has
// ended, with an error that wraps the context's.
func TestReadsTakeContext(t *testing.T) {
	l := &lineage.Ledger{Path: filepath.Join(t.TempDir(), "lineage.jsonl")}
	link := lineage.Link{Child: "6c2b1c1e-4b7a-4f7e-9d2a-1a2b3c4d5e6f", Parent: "0b0e3c1a-2d4f-4a6b-8c9d-0e1f2a3b4c5d", By: lineage.ByParent}
	if _, err := l.Register(context.Background(), link); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Rows(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Rows: %v, want context.Canceled", err)
	}
	if _, err := l.Links(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Links: %v, want context.Canceled", err)
	}
	if _, _, err := l.Parent(ctx, link.Child); !errors.Is(err, context.Canceled) {
		t.Errorf("Parent: %v, want context.Canceled", err)
	}
	if rows, err := l.Rows(context.Background()); len(rows) != 1 || err != nil {
		t.Errorf("Rows = %v, %v; want the one row", rows, err)
	}
}
