// Package jsonscan reads the few fields a caller wants out of one JSON
// value in a single pass, without encoding/json, and validates the rest as
// encoding/json does. It is for hot paths that decode one shape of row
// many times (transcript's rider reader): the caller walks the value with
// Object, Array and the field readers, and falls back to encoding/json
// whenever the scanner bails.
//
// The scanner bails (Bailed reports true) on everything it is not sure to
// read exactly as encoding/json does: input that is not valid JSON, a
// value nested deeper than MaxDepth, and whatever a caller's member
// function refuses (FieldIndex names the keys encoding/json might match
// differently than by their bytes). A value read without bailing gives the
// caller what encoding/json would give it (FuzzScanner holds that).
package jsonscan

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is how deeply nested a value the scanner reads itself; deeper
// values are left to encoding/json.
const MaxDepth = 64

// Scanner reads one JSON text held in memory.
type Scanner struct {
	b    []byte
	i    int
	bail bool
}

// New returns a scanner at the start of b.
func New(b []byte) *Scanner { return &Scanner{b: b} }

// Bailed reports whether the scanner gave up; the caller decodes the text
// with encoding/json instead.
func (s *Scanner) Bailed() bool { return s.bail }

// Bail makes the scanner give up.
func (s *Scanner) Bail() { s.bail = true }

// Done reports whether the text was read whole without bailing.
func (s *Scanner) Done() bool { return !s.bail && s.i == len(s.b) }

// Peek returns the byte at the scanner's position, 0 at the end.
func (s *Scanner) Peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// FieldIndex is the index of key among names, -1 when it is none of them,
// or -2 when encoding/json might match it differently than by bytes: it is
// escaped, not ASCII, a name seen before (seen[i] is set for each name
// matched), or a name but for case.
func FieldIndex(key []byte, seen []bool, names ...string) int {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return -2
		}
	}
	for i, n := range names {
		if len(key) != len(n) {
			continue // ASCII keys fold to names of their own length only
		}
		if string(key) == n {
			if seen[i] {
				return -2
			}
			seen[i] = true
			return i
		}
		if strings.EqualFold(string(key), n) {
			return -2
		}
	}
	return -1
}

func (s *Scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Object reads an object at the scanner's position, nested depth levels
// deep; member is called with each key, the position at the start of its
// value, and reads the value (or returns false to bail). A nil member
// skips every value.
func (s *Scanner) Object(depth int, member func(key []byte) bool) {
	if !s.open(depth, '{', '}') {
		return
	}
	for {
		key, _ := s.str()
		if s.bail {
			return
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			s.bail = true
			return
		}
		s.i++
		s.ws()
		if member == nil {
			s.Skip(depth + 1)
		} else if !member(key) {
			s.bail = true
		}
		if s.bail || !s.next('}') {
			return
		}
	}
}

// open reads the opening byte of an object or an array nested depth deep
// and reports whether a member or an element follows; an empty one is
// read whole.
func (s *Scanner) open(depth int, open, close byte) bool {
	if depth > MaxDepth || s.i >= len(s.b) || s.b[s.i] != open {
		s.bail = true
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == close {
		s.i++
		return false
	}
	return true
}

// next reads what follows a member or an element: a comma (another one
// follows: true) or close (the end: false). Anything else bails.
func (s *Scanner) next(close byte) bool {
	s.ws()
	if s.i >= len(s.b) {
		s.bail = true
		return false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.ws()
		return true
	case close:
		s.i++
		return false
	}
	s.bail = true
	return false
}

// Skip reads any value at the scanner's position.
func (s *Scanner) Skip(depth int) {
	if depth > MaxDepth || s.i >= len(s.b) {
		s.bail = true
		return
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.Object(depth, nil)
	case c == '[':
		s.Array(depth, func(int) { s.Skip(depth + 1) })
	case c == '"':
		s.str()
	case c == '-' || c >= '0' && c <= '9':
		s.number()
	default:
		s.literal()
	}
}

// Raw reads any value at the scanner's position and returns a copy of its
// bytes.
func (s *Scanner) Raw(depth int) []byte {
	start := s.i
	s.Skip(depth)
	return bytes.Clone(s.b[start:s.i])
}

// Array reads an array at the scanner's position, calling item for each
// element with the position at its start and the element's depth.
func (s *Scanner) Array(depth int, item func(depth int)) {
	if !s.open(depth, '[', ']') {
		return
	}
	for {
		item(depth + 1)
		if s.bail || !s.next(']') {
			return
		}
	}
}

// str reads a string at s.i and returns its bytes between the quotes and
// whether it holds an escape.
func (s *Scanner) str() (raw []byte, escaped bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.bail = true
		return nil, false
	}
	start := s.i + 1
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], escaped
		case c < 0x20:
			s.bail = true
			return nil, false
		case c == '\\':
			escaped = true
			i++
			if i >= len(s.b) {
				s.bail = true
				return nil, false
			}
			switch s.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s.b) {
					s.bail = true
					return nil, false
				}
				for _, h := range s.b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						s.bail = true
						return nil, false
					}
				}
				i += 4
			default:
				s.bail = true
				return nil, false
			}
		}
	}
	s.bail = true
	return nil, false
}

// number reads a JSON number at s.i.
func (s *Scanner) number() {
	b, i := s.b, s.i
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.bail = true
		return
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.bail = true
			return
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.bail = true
			return
		}
	}
	s.i = i
}

// literal reads true, false or null at s.i and returns its first byte.
func (s *Scanner) literal() byte {
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.i += len(lit)
			return lit[0]
		}
	}
	s.bail = true
	return 0
}

// Null reads the null at the scanner's position; anything else bails.
func (s *Scanner) Null() {
	if s.Peek() != 'n' || s.literal() != 'n' {
		s.bail = true
	}
}

// String reads a value into a string field as encoding/json does: a
// string is decoded, anything else leaves the field "".
func (s *Scanner) String() string {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.Skip(1)
		return ""
	}
	start := s.i
	raw, escaped := s.str()
	if s.bail {
		return ""
	}
	if !escaped && utf8.Valid(raw) {
		return string(raw)
	}
	var v string
	if json.Unmarshal(s.b[start:s.i], &v) != nil {
		s.bail = true
	}
	return v
}

// StringOf is [Scanner.String] for a field whose values are mostly a few
// words (a row's type, a stop reason): a value that is one of known, the
// same bytes without an escape, is that string itself, and reading it
// allocates nothing. known must hold plain ASCII without a quote, a
// backslash or a control character.
func (s *Scanner) StringOf(known []string) string {
	if s.i < len(s.b) && s.b[s.i] == '"' {
		rest := s.b[s.i+1:]
		for _, k := range known {
			// A match ends at its closing quote: a known word holds no
			// backslash, so the value has no escape either.
			if len(rest) > len(k) && rest[len(k)] == '"' && string(rest[:len(k)]) == k {
				s.i += len(k) + 2
				return k
			}
		}
	}
	return s.String()
}

// Bool reads a value into a bool field as encoding/json does: true is
// true, anything else leaves it false.
func (s *Scanner) Bool() bool {
	if s.i < len(s.b) && s.b[s.i] == 't' {
		return s.literal() == 't'
	}
	s.Skip(1)
	return false
}

// The exact readers read a value into a field as encoding/json does when
// its error matters: a value it would refuse for the field's type (and
// report as an *json.UnmarshalTypeError) bails, so the caller's fallback
// to encoding/json reports the same error. A null is the field's zero
// value (encoding/json leaves the field as it was: zero, for a field each
// key sets at most once, as FieldIndex keeps it).

// Whole reads b's one object, with JSON white space around it, calling
// member as [Scanner.Object] does; it reports whether the text was read
// whole without bailing. A text that is not an object bails (into a
// struct, encoding/json reads null as nothing and refuses the rest).
func (s *Scanner) Whole(member func(key []byte) bool) bool {
	s.ws()
	s.Object(0, member)
	s.ws()
	return s.Done()
}

// ExactString reads a string, or null as "". Anything else bails.
func (s *Scanner) ExactString() string {
	switch s.Peek() {
	case '"':
		return s.String()
	case 'n':
		s.Null()
		return ""
	}
	s.bail = true
	return ""
}

// ExactInt reads a number into an integer field of bits bits, or null as
// 0. A number that is not an integer literal in range, and anything else,
// bails.
func (s *Scanner) ExactInt(bits int) int64 {
	lit, ok := s.integer()
	if !ok || lit == nil {
		return 0
	}
	n, err := strconv.ParseInt(string(lit), 10, bits)
	if err != nil {
		s.bail = true
		return 0
	}
	return n
}

// ExactUint is [Scanner.ExactInt] for an unsigned field.
func (s *Scanner) ExactUint(bits int) uint64 {
	lit, ok := s.integer()
	if !ok || lit == nil {
		return 0
	}
	n, err := strconv.ParseUint(string(lit), 10, bits)
	if err != nil {
		s.bail = true
		return 0
	}
	return n
}

// integer reads a number's literal, or null (nil, true). Anything else
// bails.
func (s *Scanner) integer() ([]byte, bool) {
	switch c := s.Peek(); {
	case c == 'n':
		s.Null()
		return nil, !s.bail
	case c == '-' || c >= '0' && c <= '9':
		start := s.i
		s.number()
		return s.b[start:s.i], !s.bail
	}
	s.bail = true
	return nil, false
}

// ExactStrings reads an array of strings into a []string field: null is
// nil, [] an empty slice, a null element "". Anything else bails.
func (s *Scanner) ExactStrings(depth int) []string {
	switch s.Peek() {
	case 'n':
		s.Null()
		return nil
	case '[':
		out := []string{}
		s.Array(depth, func(int) { out = append(out, s.ExactString()) })
		return out
	}
	s.bail = true
	return nil
}

// Unmarshal decodes b as json.Unmarshal decodes it into a T: by scan (a
// one-pass reader of T's fields with the exact readers), and when scan
// reports false (the scanner bailed), by json.Unmarshal itself, which
// gives its own value and error.
func Unmarshal[T any](b []byte, scan func([]byte) (T, bool)) (T, error) {
	if v, ok := scan(b); ok {
		return v, nil
	}
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}
