package receipt

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// tricky strings: escapes, HTML, invalid UTF-8, the two separators.
var tricky = []string{"", "plain", "a\"b\\c", "<&>", "tab\tnl\nnul\x00\x1f\x7f", "caf\xc3\xa9 \xff\xfe", "\u2028\u2029", "📡 [s 📡] line"}

// floats: the forms encoding/json switches between.
var floats = []float64{0, 1, -1.5, 0.001, 1e-7, 123456789012345678901234.0, 1e21, 5e-324, 0.25}

// fillRow sets every field of the struct v points to a value (n picks
// among the tricky strings and floats), pointers allocated.
func fillRow(v reflect.Value, n int) {
	for i := range v.NumField() {
		f := v.Field(i)
		k := n + i
		switch f.Kind() {
		case reflect.String:
			f.SetString(tricky[k%len(tricky)])
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(k*7919 - 5000))
		case reflect.Bool:
			f.SetBool(k%2 == 0)
		case reflect.Float64:
			f.SetFloat(floats[k%len(floats)])
		case reflect.Slice:
			if f.Type() == reflect.TypeFor[json.RawMessage]() {
				f.SetBytes([]byte(" { \"a\" : [1, \"<x>\"] ,\"b\":\"\u2028\" } "))
			} else {
				f.Set(reflect.ValueOf([]string{tricky[k%len(tricky)], tricky[(k+1)%len(tricky)]}))
			}
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			if p.Elem().Kind() == reflect.Struct {
				fillRow(p.Elem(), k)
			} else {
				one := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "X", Type: f.Type().Elem()}})).Elem()
				fillRow(one, k)
				p.Elem().Set(one.Field(0))
			}
			f.Set(p)
		case reflect.Struct:
			if f.Type() == reflect.TypeFor[time.Time]() {
				f.Set(reflect.ValueOf(time.Date(2026, 12, 3, 10, 0, k, k*1000, time.UTC)))
			}
		default:
			panic("fillRow: a field of kind " + f.Kind().String())
		}
	}
}

func sameAsReflection(t *testing.T, what string, r SendRow) {
	t.Helper()
	got, gerr := r.MarshalJSON()
	want, werr := json.Marshal(sendRowJSON(r))
	if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("%s:\nMarshalJSON %s (%v)\nreflection  %s (%v)", what, got, gerr, want, werr)
	}
	if gerr == nil {
		via, err := json.Marshal(r)
		if err != nil || !bytes.Equal(via, want) {
			t.Fatalf("%s: json.Marshal(row) %s (%v), want %s", what, via, err, want)
		}
	}
}

// TestSendRowMarshalJSON: the row's MarshalJSON writes what json.Marshal
// writes of its fields, byte for byte: every field set (each pointer
// allocated, strings and floats of every form), every pointer nil, a
// reply without a time, and the values only encoding/json writes (its
// bytes or error).
func TestSendRowMarshalJSON(t *testing.T) {
	for n := range 24 {
		var r SendRow
		fillRow(reflect.ValueOf(&r).Elem(), n)
		sameAsReflection(t, "filled "+strconv.Itoa(n), r)
	}
	sameAsReflection(t, "zero", SendRow{})
	sameAsReflection(t, "reply without a time", SendRow{Reply: &Reply{Text: "x"}, Doorman: &Doorman{}})
	inf, nan := math.Inf(1), math.NaN()
	sameAsReflection(t, "infinite wait", SendRow{WaitS: &inf})
	sameAsReflection(t, "NaN age", SendRow{Doorman: &Doorman{Age: &nan}})
	sameAsReflection(t, "invalid ack", SendRow{Ack: json.RawMessage(`{"a":`)})
	sameAsReflection(t, "empty ack", SendRow{Ack: json.RawMessage{}})
	sameAsReflection(t, "year 10000", SendRow{Reply: &Reply{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}})
	sameAsReflection(t, "a zone", SendRow{Reply: &Reply{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))}})
}

// TestSendRowKnowsEveryField: a field added to SendRow, Doorman or Reply
// and not to the writer shows in TestSendRowMarshalJSON (every field is
// set there); this holds the count, so the test itself is not left behind
// by a field of a new kind.
func TestSendRowKnowsEveryField(t *testing.T) {
	for _, c := range []struct {
		t    reflect.Type
		want int
	}{{reflect.TypeFor[SendRow](), 41}, {reflect.TypeFor[Doorman](), 7}, {reflect.TypeFor[Reply](), 5}} {
		if got := c.t.NumField(); got != c.want {
			t.Errorf("%s has %d fields, the writer knows %d: write the new one in sendjson.go and count it here", c.t, got, c.want)
		}
	}
}

// FuzzSendRowMarshalJSON holds the writer to json.Marshal for any string
// and float in the row's places.
func FuzzSendRowMarshalJSON(f *testing.F) {
	for i, s := range tricky {
		f.Add(s, floats[i%len(floats)])
	}
	f.Fuzz(func(t *testing.T, s string, fl float64) {
		r := SendRow{TS: s, Target: s, Line: &s, Note: &s, WaitS: &fl, Ack: json.RawMessage(s),
			Doorman: &Doorman{Age: &fl, LastError: &s}, Reply: &Reply{Text: s, Tools: []string{s}}}
		sameAsReflection(t, "fuzzed", r)
	})
}

// indented is a row of a program's own whose MarshalJSON spreads it over
// lines.
type indented struct{}

func (indented) MarshalJSON() ([]byte, error) { return []byte("{\n  \"a\": 1\n}"), nil }

// TestAppendKeepsALineOneLine: a send row and a program's own Marshaler
// are each one line of the receipts file, the Marshaler's compacted as
// json.Marshal compacts it.
func TestAppendKeepsALineOneLine(t *testing.T) {
	w := &Writer{Path: t.TempDir() + "/receipts.jsonl"}
	s := "x"
	for _, row := range []any{SendRow{TS: "t", Line: &s}, indented{}, &SendRow{TS: "t"}} {
		if err := w.Append(row); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(lines) != 3 || string(lines[1]) != `{"a":1}` {
		t.Fatalf("receipts file %q: want 3 lines, the second {\"a\":1}", b)
	}
	for _, l := range lines {
		if !json.Valid(l) {
			t.Errorf("line %q is not JSON", l)
		}
	}
}
