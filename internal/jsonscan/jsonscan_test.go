package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// decode reads any value with the scanner, as a caller reads the fields it
// wants: objects into maps, arrays into slices, numbers as json.Number.
func decode(s *Scanner, depth int) any {
	switch s.Peek() {
	case '{':
		m := map[string]any{}
		s.Object(depth, func(key []byte) bool {
			k := string(key)
			if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
				if json.Unmarshal([]byte(`"`+k+`"`), &k) != nil {
					return false
				}
			}
			m[k] = decode(s, depth+1)
			return true
		})
		return m
	case '[':
		a := []any{}
		s.Array(depth, func(d int) { a = append(a, decode(s, d)) })
		return a
	case '"':
		return s.String()
	case 't', 'f':
		return s.Bool()
	case 'n':
		s.Null()
		return nil
	}
	return json.Number(s.Raw(depth))
}

// nesting is how deeply arrays and objects nest in the valid JSON text b.
func nesting(b []byte) int {
	d := json.NewDecoder(bytes.NewReader(b))
	depth, most := 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			return most
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			most = max(most, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

// FuzzScanner is the differential test against encoding/json: a text the
// scanner reads whole is valid JSON and gives the value encoding/json
// gives; a valid text the scanner bails on nests at least MaxDepth deep.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"hi"}]}}`,
		`{"a":1,"a":2,"A":3}`, `{"\u0061":"\ud83d\ude00","b":"caf\u00e9"}`, "{\"k\":\"\xff\xfe\"}",
		`[1,-0,0.5e+10,-12.3E-4,true,false,null,"x"]`, `01`, `1.`, `-`, `[1,]`, `{"a" 1}`, `"\x"`, `"\u12"`,
		strings.Repeat("[", 70) + strings.Repeat("]", 70), strings.Repeat(`{"a":`, 66) + "1" + strings.Repeat("}", 66),
		`{}`, `[]`, `""`, `tru`, `nul`, "\"a\tb\"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		b := bytes.Trim([]byte(text), " \t\r\n")
		s := New(b)
		got := decode(s, 0)
		var want any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		valid := json.Valid(b) && d.Decode(&want) == nil
		if !s.Done() {
			if valid && nesting(b) < MaxDepth {
				t.Fatalf("the scanner bailed on valid JSON nested %d deep", nesting(b))
			}
			return
		}
		if !valid {
			t.Fatalf("the scanner read invalid JSON whole as %#v", got)
		}
		// reflect.DeepEqual first: cmp.Diff takes minutes over values
		// nested 60 deep.
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("(-encoding/json +scanner):\n%s", cmp.Diff(want, got))
		}
		if _, err := d.Token(); !errors.Is(err, io.EOF) {
			t.Fatalf("encoding/json found more after the value: %v", err)
		}
	})
}

func TestFieldIndex(t *testing.T) {
	names := []string{"type", "text"}
	for _, tt := range []struct {
		keys []string
		want []int
	}{
		{[]string{"type", "text", "other"}, []int{0, 1, -1}},
		{[]string{"type", "type"}, []int{0, -2}},       // repeated
		{[]string{"Type"}, []int{-2}},                  // a name but for case
		{[]string{`ty\u0070e`, "typé"}, []int{-2, -2}}, // escaped, not ASCII
		{[]string{"types", "typ"}, []int{-1, -1}},
	} {
		seen := make([]bool, len(names))
		var got []int
		for _, k := range tt.keys {
			got = append(got, FieldIndex([]byte(k), seen, names...))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("FieldIndex over %q (-want +got):\n%s", tt.keys, diff)
		}
	}
}

// stringOfWords are StringOf's known words in the tests.
var stringOfWords = []string{"user", "use", "tool_use", "text"}

// TestStringOf: StringOf reads every value as String does (a known word,
// an escaped one, a longer or shorter one, a prefix, not a string), ends
// where String ends, and reads a known word without an allocation.
func TestStringOf(t *testing.T) {
	for _, in := range []string{`"user"`, `"use"`, `"users"`, `"us"`, `"u\u0073er"`, `"user\""`, `"tool_use"`, `"text`,
		`"te"`, `""`, `1`, `null`, `["user"]`, `"tëxt"`, `"user"  `, `"user",1`} {
		a, b := New([]byte(in)), New([]byte(in))
		got, want := a.StringOf(stringOfWords), b.String()
		if got != want || a.i != b.i || a.bail != b.bail {
			t.Errorf("StringOf(%s) = %q at %d (bail %v), String %q at %d (bail %v)", in, got, a.i, a.bail, want, b.i, b.bail)
		}
	}
	s := New([]byte(`"tool_use"`))
	if n := testing.AllocsPerRun(10, func() { s.i = 0; s.StringOf(stringOfWords) }); n != 0 {
		t.Errorf("StringOf of a known word: %.0f allocations, want 0", n)
	}
}

// FuzzStringOf holds StringOf to String for any text.
func FuzzStringOf(f *testing.F) {
	for _, w := range append(stringOfWords, `u\"ser`, "users", "") {
		f.Add(`"` + w + `"`)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, b := New([]byte(in)), New([]byte(in))
		got, want := a.StringOf(stringOfWords), b.String()
		if got != want || a.i != b.i || a.bail != b.bail {
			t.Fatalf("StringOf(%q) = %q at %d (bail %v), String %q at %d (bail %v)", in, got, a.i, a.bail, want, b.i, b.bail)
		}
	})
}

// exactTarget is a struct of every kind the exact readers fill.
type exactTarget struct {
	S  string   `json:"s"`
	I  int64    `json:"i"`
	I8 int8     `json:"i8"`
	U  uint64   `json:"u"`
	P  *string  `json:"p"`
	N  *int64   `json:"n"`
	L  []string `json:"l"`
	A  any      `json:"a"`
}

// scanExact reads text into an exactTarget with the exact readers, as a
// caller of Whole does; ok is false when the scanner bailed.
func scanExact(text []byte) (x exactTarget, ok bool) {
	s := New(text)
	var seen [8]bool
	ok = s.Whole(func(key []byte) bool {
		switch FieldIndex(key, seen[:], "s", "i", "i8", "u", "p", "n", "l", "a") {
		case 0:
			x.S = s.ExactString()
		case 1:
			x.I = s.ExactInt(64)
		case 2:
			x.I8 = int8(s.ExactInt(8))
		case 3:
			x.U = s.ExactUint(64)
		case 4:
			if s.Peek() == 'n' {
				s.Null()
			} else {
				v := s.ExactString()
				x.P = &v
			}
		case 5:
			if s.Peek() == 'n' {
				s.Null()
			} else {
				v := s.ExactInt(64)
				x.N = &v
			}
		case 6:
			x.L = s.ExactStrings(1)
		case 7:
			s.Null() // any: only null is read here
		case -1:
			s.Skip(1)
		default:
			return false
		}
		return true
	})
	return x, ok
}

// TestExact: the exact readers take what encoding/json takes without an
// error, and bail on what it refuses for the field's type.
func TestExact(t *testing.T) {
	for _, tt := range []struct {
		text string
		ok   bool
	}{
		{`{"s":"a","i":-12,"i8":127,"u":18446744073709551615,"p":"x","n":7,"l":["a",null,"b"],"a":null,"other":[1,{"x":2}]}`, true},
		{` {"s":null,"i":null,"u":null,"p":null,"n":null,"l":null} `, true},
		{`{"l":[]}`, true},
		{`{"s":"caf\u00e9","p":"\ud83d\ude00"}`, true},
		{`{"s":1}`, false}, {`{"s":true}`, false}, {`{"i":1.5}`, false}, {`{"i":1e3}`, false},
		{`{"i":"1"}`, false}, {`{"i8":128}`, false}, {`{"u":-1}`, false}, {`{"i":9223372036854775808}`, false},
		{`{"l":"a"}`, false}, {`{"l":[1]}`, false}, {`{"a":1}`, false}, {`{"p":5}`, false},
		{`{"s":"a","s":"b"}`, false}, {`{"S":"a"}`, false}, {`null`, false}, {`[]`, false}, {`{"s":"a"} x`, false},
	} {
		got, ok := scanExact([]byte(tt.text))
		if ok != tt.ok {
			t.Errorf("%s: read %v, want %v", tt.text, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		var want exactTarget
		if err := json.Unmarshal([]byte(tt.text), &want); err != nil {
			t.Errorf("%s: encoding/json: %v", tt.text, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: (-encoding/json +scanner)\n%s", tt.text, diff)
		}
	}
}

// FuzzExact is the exact readers' differential test against
// encoding/json: a text read without bailing is one encoding/json reads
// without an error, into the same values.
func FuzzExact(f *testing.F) {
	for _, seed := range []string{
		`{"s":"a","i":-12,"i8":127,"u":18446744073709551615,"p":"x","n":7,"l":["a",null,"b"],"a":null}`,
		`{"s":null,"l":[]}`, `{"i":1.5}`, `{"u":-1}`, `{"S":"a"}`, `{"l":[1]}`, "{\"s\":\"\xff\"}", `{"i8":-129}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, ok := scanExact([]byte(text))
		if !ok {
			return
		}
		var want exactTarget
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatalf("%q: the scanner read it, encoding/json refuses it: %v", text, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q: (-encoding/json +scanner)\n%s", text, diff)
		}
	})
}
