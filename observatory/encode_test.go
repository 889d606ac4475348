package observatory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/transcript"
)

// sameAsMarshal fails unless d.AppendJSON gives json.Marshal(d)'s bytes
// (after a prefix it must keep) or its error.
func sameAsMarshal(t *testing.T, what string, d *observatory.Document) {
	t.Helper()
	want, wantErr := json.Marshal(d)
	got, err := d.AppendJSON([]byte("prefix:"))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: AppendJSON error %v, json.Marshal's %v", what, err, wantErr)
	}
	if wantErr != nil {
		if string(got) != "prefix:" {
			t.Errorf("%s: AppendJSON failed but changed the buffer: %q", what, got)
		}
		return
	}
	if !bytes.HasPrefix(got, []byte("prefix:")) {
		t.Fatalf("%s: the prefix is gone: %.40q", what, got)
	}
	if got = got[len("prefix:"):]; !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-80)
		t.Fatalf("%s: AppendJSON differs from json.Marshal at byte %d:\n got  …%s\n want …%s", what, i, got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
	}
}

// tricky are strings for every escaping rule of encoding/json.
var tricky = []string{
	"plain", "", `quote " backslash \ slash /`, "<b>&amp;</b>", "tab\tnew\nline\rret\bbs\fff",
	"\x00\x01\x1f\x7f", "ünïcödé 📡 日本", "bad \xff utf8 \xe2\x82", "sep \u2028 and \u2029",
	"\xed\xa0\x80 surrogate", "</script>",
}

// filled sets every field reachable from v (a pointer) to a value that is
// not its zero, picking strings from tricky by a running counter: a field
// that AppendJSON does not write makes the documents differ.
func filled(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		filled(v.Elem(), n)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 30, 12, 0, *n%60, *n*1000, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				filled(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			filled(v.Index(i), n)
		}
	case reflect.String:
		v.SetString(tricky[*n%len(tricky)] + "·" + tricky[(*n+3)%len(tricky)])
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n) * 7919)
	case reflect.Float64:
		v.SetFloat([]float64{27.6, 600, 0.1, 1e-7, 1e21, 123456789.125, -3.5}[*n%7])
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("filled: a field of kind " + v.Kind().String() + ": teach the test and AppendJSON")
	}
}

// TestAppendJSONMatchesMarshal holds AppendJSON to json.Marshal's bytes:
// on built documents, on a document whose every field (every session,
// rider, inbox, doorman, offline inbox, start and station) is set, on the
// zero and empty documents, and on floats and times at encoding/json's
// edges, including those it refuses.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	for _, all := range []bool{false, true} {
		st := bigStation(t, 12, 4, 3)
		doc, err := observatory.Build(context.Background(), observatory.Options{Station: st, IncludeFinished: all})
		if err != nil {
			t.Fatal(err)
		}
		sameAsMarshal(t, "built", doc)
	}
	for seed := range 8 {
		var d observatory.Document
		n := seed
		filled(reflect.ValueOf(&d).Elem(), &n)
		sameAsMarshal(t, "every field set", &d)
		// The same with the null-able fields of its values emptied.
		for i := range d.Sessions {
			s := &d.Sessions[i]
			s.HostSession, s.Station, s.Riders, s.Children = "", "", nil, nil
			s.Inbox.Doorman, s.Inbox.Offset, s.Inbox.LastLine = nil, nil, ""
		}
		for i := range d.Starts {
			d.Starts[i].PID, d.Starts[i].Unit = nil, ""
		}
		d.Stations[0].Name, d.Stations[1].Error = "", ""
		sameAsMarshal(t, "some fields empty", &d)
	}
	sameAsMarshal(t, "zero", &observatory.Document{})
	sameAsMarshal(t, "empty", &observatory.Document{Sessions: []observatory.Session{{Riders: []transcript.Rider{{}}, Children: []string{}}},
		OfflineInboxes: []observatory.OfflineInbox{{}}, Starts: []observatory.Start{{}}, Warnings: []string{}, Stations: []observatory.StationState{}})

	for _, f := range []float64{0, math.Copysign(0, -1), 1e-6, 9.99e-7, 1e20, 1e21, 5e-324, math.MaxFloat64, 0.30000000000000004, math.NaN(), math.Inf(1)} {
		sameAsMarshal(t, "float", &observatory.Document{RidingWindowS: f})
		sameAsMarshal(t, "doorman float", &observatory.Document{Sessions: []observatory.Session{{Inbox: inboxv1.Inbox{Doorman: &inboxv1.Doorman{LastSeenS: &f}}}}})
	}
	for _, tm := range []time.Time{
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", 2*3600)),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", -(9*3600+30*60))),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.Local),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", 24*3600)),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", 3600+30)),
	} {
		sameAsMarshal(t, "time "+tm.String(), &observatory.Document{Sessions: []observatory.Session{{Riders: []transcript.Rider{{Started: tm}}}}})
	}
}

// FuzzAppendJSONString holds AppendJSON's string escaping to
// encoding/json's for any bytes, in a plain and a null-able string.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameAsMarshal(t, "string", &observatory.Document{Station: s, Sessions: []observatory.Session{{HostSession: inboxv1.NullString(s)}}})
	})
}

// TestAppendJSONAllocs: the document of 200 sessions × 10 riders is
// written into a buffer sized once from its counts (a regrowth or two
// allowed), where json.Marshal makes thousands of allocations (a
// Marshaler call per rider and per null-able string).
func TestAppendJSONAllocs(t *testing.T) {
	doc, err := observatory.Build(context.Background(), observatory.Options{Station: bigStation(t, 200, 10, 10)})
	if err != nil {
		t.Fatal(err)
	}
	got := testing.AllocsPerRun(5, func() {
		if _, err := doc.AppendJSON(nil); err != nil {
			t.Fatal(err)
		}
	})
	marshal := testing.AllocsPerRun(1, func() { _, _ = json.Marshal(doc) })
	t.Logf("AppendJSON: %.0f allocations, json.Marshal: %.0f", got, marshal)
	if got > 3 {
		t.Errorf("AppendJSON made %.0f allocations, want at most 3 (its buffer)", got)
	}
}

// BenchmarkDocumentJSON writes the document of 200 sessions × 10 riders
// (all changed within the window, half riding) as `sessions --json` does,
// and with json.Marshal, as it did.
func BenchmarkDocumentJSON(b *testing.B) {
	doc, err := observatory.Build(context.Background(), observatory.Options{Station: bigStation(b, 200, 10, 10)})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := doc.AppendJSON(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
