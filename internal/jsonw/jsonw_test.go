package jsonw

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// marshal is json.Marshal's bytes of v, or nil when it refuses v.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// written is what f appends to a fresh Encoder, or nil when it falls back.
func written(f func(e *Encoder)) []byte {
	var e Encoder
	f(&e)
	if e.Fallback {
		return nil
	}
	return e.B
}

func same(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s: wrote %q, json.Marshal %q", what, got, want)
	}
}

// TestValues: each writer appends json.Marshal's bytes, and falls back
// exactly where json.Marshal refuses the value.
func TestValues(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 1e-7, 9.99e20, 1e21, 5e-324, math.MaxFloat64, math.Inf(1), math.NaN()} {
		same(t, "float", written(func(e *Encoder) { e.Float(f) }), marshal(f))
	}
	for _, tm := range []time.Time{time.Date(2026, 12, 3, 10, 0, 0, 5, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", -7200)), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), {}} {
		same(t, "time "+tm.String(), written(func(e *Encoder) { e.Time(tm) }), marshal(tm))
	}
	for _, m := range []json.RawMessage{nil, {}, json.RawMessage(` { "a" : "<\u2028>" , "b":[ 1 , 2 ] } `), json.RawMessage(`{"a":`), json.RawMessage(`"x" y`)} {
		same(t, "raw "+string(m), written(func(e *Encoder) { e.Raw(m) }), marshal(m))
	}
	n, b, s, f := 7, true, "s", 0.5
	same(t, "int ptr", written(func(e *Encoder) { IntPtr(e, &n) }), marshal(&n))
	same(t, "nil int ptr", written(func(e *Encoder) { IntPtr[int](e, nil) }), marshal((*int)(nil)))
	same(t, "bool ptr", written(func(e *Encoder) { e.BoolPtr(&b) }), marshal(&b))
	same(t, "str ptr", written(func(e *Encoder) { e.StrPtr(&s) }), marshal(&s))
	same(t, "float ptr", written(func(e *Encoder) { e.FloatPtr(&f) }), marshal(&f))
	same(t, "uint", written(func(e *Encoder) { e.Uint(math.MaxUint64) }), marshal(uint64(math.MaxUint64)))
	same(t, "strs", written(func(e *Encoder) { e.Strs([]string{"a", "<b>"}) }), marshal([]string{"a", "<b>"}))
	same(t, "nil strs", written(func(e *Encoder) { e.Strs(nil) }), marshal([]string(nil)))
}

// FuzzStr holds the string writer to json.Marshal for any bytes.
func FuzzStr(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "<&>", "\x00\x1f\x7f\b\f\n\r\t", "caf\xc3\xa9\xff", "\u2028\u2029📡"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		same(t, "string", written(func(e *Encoder) { e.Str(s) }), marshal(s))
	})
}

// FuzzFloat holds the float writer to json.Marshal for any float64.
func FuzzFloat(f *testing.F) {
	for _, v := range []float64{0, 1e-7, 1e21, 123.456} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		same(t, "float", written(func(e *Encoder) { e.Float(v) }), marshal(v))
	})
}
