package inbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/inboxv1"
)

// LineReason is the one table of the line rules: the reason of the rule
// err (an error of [CheckLine] or [Decode]) breaks, for the sender that
// refuses such a line before writing it and the doorman that acks one it
// reads as refused alike. An error that names none of the rules is
// [inboxv1.ReasonUndeliverable]: a line the doorman cannot carry.
func LineReason(err error) inboxv1.Reason {
	switch {
	case errors.Is(err, inboxv1.ErrEmptyLine):
		return inboxv1.ReasonEmpty
	case errors.Is(err, inboxv1.ErrNewline):
		return inboxv1.ReasonNewline
	case errors.Is(err, inboxv1.ErrLineTooLong):
		return inboxv1.ReasonTooLong
	case errors.Is(err, inboxv1.ErrInvalidUTF8):
		return inboxv1.ReasonInvalidUTF8
	case errors.Is(err, inboxv1.ErrNUL):
		return inboxv1.ReasonNUL
	}
	return inboxv1.ReasonUndeliverable
}

// CheckLine enforces the contract's line rules: not empty (nor only spaces),
// no newline or carriage return, at most [MaxLineBytes] bytes, valid UTF-8,
// no NUL.
func CheckLine(line []byte) error {
	fail := func(err error) error { return &inboxv1.LineError{Bytes: len(line), Err: err} }
	switch {
	case len(bytes.TrimSpace(line)) == 0 || tagOnly(line):
		return fail(inboxv1.ErrEmptyLine)
	case bytes.ContainsAny(line, "\n\r"):
		return fail(inboxv1.ErrNewline)
	case len(line) > inboxv1.MaxLineBytes:
		return fail(inboxv1.ErrLineTooLong)
	case !utf8.Valid(line):
		return fail(inboxv1.ErrInvalidUTF8)
	case bytes.IndexByte(line, 0) >= 0:
		return fail(inboxv1.ErrNUL)
	}
	return nil
}

// tagOnly reports whether line is a sender tag and nothing else: nothing
// to say, so as empty as an empty line.
func tagOnly(line []byte) bool {
	_, end, ok := senderTag(string(line))
	return ok && len(bytes.TrimSpace(line[end:])) == 0
}

// CheckFrom enforces the sender-name rule: 1–80 characters, no brackets, no
// control characters, no format characters (Unicode category Cf: the bidi
// overrides such as U+202E, zero-width joiners), valid UTF-8.
func CheckFrom(from string) error {
	n := utf8.RuneCountInString(from)
	if n < 1 || n > 80 || !utf8.ValidString(from) || strings.TrimSpace(from) == "" {
		return &inboxv1.LineError{Bytes: len(from), Err: inboxv1.ErrBadFrom}
	}
	for _, r := range from {
		if r == '[' || r == ']' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return &inboxv1.LineError{Bytes: len(from), Err: inboxv1.ErrBadFrom}
		}
	}
	return nil
}

// SanitizeFrom turns any string into an acceptable sender name: brackets,
// format characters (Cf), invalid bytes and U+FFFD removed, control characters and spaces folded to
// one space, cut to 80 characters. What it returns passes [CheckFrom]
// unless it is "".
// It returns "" when nothing is left.
func SanitizeFrom(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if r == '[' || r == ']' || r == utf8.RuneError || unicode.Is(unicode.Cf, r) {
			return -1
		}
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:80])
		s = strings.TrimSpace(s)
	}
	return s
}

// senderTag matches a leading sender tag, the rule the regular
// expression ^\[([^\[\]]{1,80}?) 📡(?: [^\[\]]*)?\] states: a '[', the
// sender (1–80 characters, the fewest that fit), a space and the antenna,
// then nothing or a space and more, and the ']' that closes it, with no
// bracket between the two. It returns the sender and the length of the
// tag. It is written out rather than compiled: a send is one process, and
// compiling the expression was a tenth of its own work.
func senderTag(line string) (from string, end int, ok bool) {
	if len(line) == 0 || line[0] != '[' {
		return "", 0, false
	}
	// The tag ends at the first bracket after the opening one; it must
	// be a ']'.
	shut := 1 + strings.IndexAny(line[1:], "[]")
	if shut == 0 || line[shut] != ']' {
		return "", 0, false
	}
	in := line[1:shut]
	const mark = " " + inboxv1.Antenna
	// The fewest characters of sender (at least one, at most 80) after
	// which the mark follows, then the end of the tag or a space. A
	// character is what the expression steps by: a UTF-8 sequence, or one
	// byte of an invalid one.
	for i, n := 0, 0; i < len(in) && n < 80; n++ {
		_, w := utf8.DecodeRuneInString(in[i:])
		i += w
		if rest, ok := strings.CutPrefix(in[i:], mark); ok && (rest == "" || rest[0] == ' ') {
			return in[:i], shut + 1, true
		}
	}
	return "", 0, false
}

// SenderTag returns the sender named by a leading tag — "[x 📡] …", also
// "[zai 📡 PONG 🐉] …" — and whether the line has one.
func SenderTag(line string) (from string, ok bool) {
	from, _, ok = senderTag(line)
	return from, ok
}

// Tagged returns line with the tag "[from 📡] " in front, unless it already
// carries a sender tag.
func Tagged(line, from string) string {
	if _, ok := SenderTag(line); ok {
		return line
	}
	return "[" + from + " " + inboxv1.Antenna + "] " + line
}

// Structured is the contract's optional JSON form of a line.
type Structured struct {
	V    int    `json:"v"`
	ID   string `json:"id,omitempty"`
	TS   string `json:"ts,omitempty"`
	From string `json:"from"`
	Line string `json:"line"`
	// Priority is oo-claude's extension key: when the receiver shows the
	// line (PriorityNow, PriorityNext, PriorityLater); absent or anything
	// else reads as PriorityNext, so v1 lines are unchanged.
	Priority string `json:"priority,omitempty"`
	// Origin is oo-claude's extension key of a line a session's model
	// sent (the doorman's station_send tool): the sending session's id.
	// [Decode] tags such a line "[from 📡 session <8 hex>] ", so the
	// receiving model and `read` see that a session wrote it.
	Origin string `json:"origin,omitempty"`
}

// OriginTagged is line tagged as a line a session's model sent: the tag
// "[from 📡 session <short id>] " in front, unless it already carries a
// sender tag (the doorman's tool refuses a model's line that does).
func OriginTagged(line, from, origin string) string {
	if _, ok := SenderTag(line); ok {
		return line
	}
	short := []rune(origin)
	if len(short) > 8 {
		short = short[:8]
	}
	return "[" + from + " " + inboxv1.Antenna + " session " + string(short) + "] " + line
}

// PriorityOf is the priority a line asking for p is shown with: now and
// later as asked, anything else next.
func PriorityOf(p string) string {
	if p == inboxv1.PriorityNow || p == inboxv1.PriorityLater {
		return p
	}
	return inboxv1.PriorityNext
}

// ParseStructured reports whether raw is a structured line (a JSON object
// with a non-empty string "line") and returns it.
func ParseStructured(raw []byte) (Structured, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return Structured{}, false
	}
	var s Structured
	if err := json.Unmarshal(raw, &s); err != nil || s.Line == "" {
		return Structured{}, false
	}
	return s, true
}

// Message is what the doorman carries through the door for one raw line.
type Message struct {
	Text string // the text the model is shown: a structured line's text, tagged; a plain line as written
	From string // the sender, sanitised; DefaultFrom when none is known
	// Priority is the structured line's priority when it is now or later,
	// else PriorityNext (every plain line).
	Priority string
}

// Decode turns a raw inbox line into the message the doorman delivers: the
// structured form's line (tagged with its from when untagged), or the plain
// line as it is. From comes from the structured from, else the tag, else
// [DefaultFrom], sanitised.
func Decode(raw []byte) (Message, error) {
	if err := CheckLine(raw); err != nil {
		return Message{}, err
	}
	if s, ok := ParseStructured(raw); ok {
		from := SanitizeFrom(s.From)
		if from == "" {
			if tf, ok := SenderTag(s.Line); ok {
				from = SanitizeFrom(tf)
			}
		}
		if from == "" {
			from = inboxv1.DefaultFrom
		}
		text := Tagged(s.Line, from)
		if o := SanitizeFrom(s.Origin); o != "" {
			text = OriginTagged(s.Line, from, o)
		}
		if err := CheckLine([]byte(text)); err != nil {
			return Message{}, err
		}
		return Message{Text: text, From: from, Priority: PriorityOf(s.Priority)}, nil
	}
	line := string(raw)
	from := inboxv1.DefaultFrom
	if tf, ok := SenderTag(line); ok {
		if f := SanitizeFrom(tf); f != "" {
			from = f
		}
	}
	return Message{Text: line, From: from, Priority: inboxv1.PriorityNext}, nil
}

// SHA256 is the hex sha256 of the exact line bytes without the newline: the
// key an ack is matched by.
func SHA256(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}
