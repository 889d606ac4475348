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
