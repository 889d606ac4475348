// Package jsonw writes JSON byte for byte as json.Marshal writes it, field
// by field, without reflection: for the values a process writes once on a
// hot path (a send's receipt and verdict row, the sessions document),
// where encoding/json's first encoding of a type builds the type's field
// table (tens of microseconds a type, measured) and a document of
// thousands of values pays a Marshaler call and a validated copy for each.
//
// An [Encoder] appends values to its buffer; the caller appends the
// punctuation and the keys, in the type's field order, as literal bytes.
// A value an Encoder cannot write exactly as json.Marshal does (a float
// that is not finite, a time RFC 3339 cannot hold, a raw message that is
// not valid JSON) sets Fallback: the caller then returns json.Marshal's
// own bytes or error. Each caller holds its encoding to json.Marshal's by
// a test (byte for byte, every field set, and fuzzed strings).
package jsonw

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Encoder appends JSON values to B.
type Encoder struct {
	B []byte
	// Fallback is set when a value was met that only json.Marshal writes
	// exactly (or refuses with its own error).
	Fallback bool
}

// Null appends null.
func (e *Encoder) Null() { e.B = append(e.B, "null"...) }

// Bool appends true or false.
func (e *Encoder) Bool(v bool) {
	if v {
		e.B = append(e.B, "true"...)
	} else {
		e.B = append(e.B, "false"...)
	}
}

// Int appends n.
func (e *Encoder) Int(n int64) { e.B = strconv.AppendInt(e.B, n, 10) }

// Uint appends n.
func (e *Encoder) Uint(n uint64) { e.B = strconv.AppendUint(e.B, n, 10) }

// IntPtr appends *p, or null for nil.
func IntPtr[T int | int64](e *Encoder, p *T) {
	if p == nil {
		e.Null()
		return
	}
	e.Int(int64(*p))
}

// BoolPtr appends *p, or null for nil.
func (e *Encoder) BoolPtr(p *bool) {
	if p == nil {
		e.Null()
		return
	}
	e.Bool(*p)
}

// StrPtr appends *p, or null for nil.
func (e *Encoder) StrPtr(p *string) {
	if p == nil {
		e.Null()
		return
	}
	e.Str(*p)
}

// FloatPtr appends *p, or null for nil.
func (e *Encoder) FloatPtr(p *float64) {
	if p == nil {
		e.Null()
		return
	}
	e.Float(*p)
}

// Strs appends a []string: null when nil.
func (e *Encoder) Strs(v []string) {
	if v == nil {
		e.Null()
		return
	}
	e.B = append(e.B, '[')
	for i, s := range v {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		e.Str(s)
	}
	e.B = append(e.B, ']')
}

// Float is encoding/json's float64: the shortest decimal that reads back
// as f, in the exponent form below 1e-6 and from 1e21 on (e-7, not
// e-07). Not finite, it is json.Marshal's error (Fallback).
func (e *Encoder) Float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.Fallback = true
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.B = strconv.AppendFloat(e.B, f, format, -1, 64)
	if format == 'e' {
		if n := len(e.B); n >= 4 && e.B[n-4] == 'e' && e.B[n-3] == '-' && e.B[n-2] == '0' {
			e.B[n-2] = e.B[n-1]
			e.B = e.B[:n-1]
		}
	}
}

// Time is time.Time's MarshalJSON: RFC 3339 with nanoseconds, quoted,
// appended in place for a UTC time of a four-digit year (the times the
// files hold); any other time by its MarshalJSON, and one that cannot be
// written is left to json.Marshal, which knows its error (Fallback).
func (e *Encoder) Time(t time.Time) {
	if y := t.Year(); t.Location() == time.UTC && y >= 0 && y <= 9999 {
		e.B = append(e.B, '"')
		e.B = t.AppendFormat(e.B, time.RFC3339Nano)
		e.B = append(e.B, '"')
		return
	}
	out, err := t.MarshalJSON()
	if err != nil {
		e.Fallback = true
		return
	}
	e.B = append(e.B, out...)
}

// Raw is a json.RawMessage as json.Marshal writes one: null when nil,
// else the message compacted, with <, >, &, U+2028 and U+2029 escaped as
// everywhere else. A message that is not valid JSON (an empty one among
// them) is json.Marshal's error (Fallback).
func (e *Encoder) Raw(m json.RawMessage) {
	if m == nil {
		e.Null()
		return
	}
	var c bytes.Buffer
	if json.Compact(&c, m) != nil {
		e.Fallback = true
		return
	}
	var h bytes.Buffer
	json.HTMLEscape(&h, c.Bytes())
	e.B = append(e.B, h.Bytes()...)
}

// Str is encoding/json's string, HTML-escaped as json.Marshal escapes:
// the quote, the backslash and the control characters escaped (\b \f \n \r
// \t by name, the others as \u00XX), <, > and & as \u003c \u003e
// \u0026, invalid UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 \u2029.
func (e *Encoder) Str(s string) {
	const hex = "0123456789abcdef"
	b := append(e.B, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	e.B = append(b, '"')
}
