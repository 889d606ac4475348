package door

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/station"
)

// Priority is a user frame's priority as the receiver reads it.
type Priority string

// The receiver's priorities. Any other value is read as [PriorityNext].
const (
	// PriorityNow appends the text to the running tool's result.
	PriorityNow Priority = "now"
	// PriorityNext shows the text after the running tool, or starts a turn.
	PriorityNext Priority = "next"
	// PriorityLater runs another turn after the current one.
	PriorityLater Priority = "later"
)

// defaultPriority is the priority of a [Message] whose Priority is empty.
const defaultPriority = PriorityNext

// maxWriteBytes bounds the bytes of one delivery (auth and user frames
// together). The receiver drops a connection whose buffer exceeds 1,048,576
// characters (UTF-16 code units, never more than the UTF-8 bytes), counted
// per read before lines are split; staying below it by a margin keeps one
// delivery inside the buffer whatever the kernel's chunking.
const maxWriteBytes = 1_000_000

// Message is one line for a session, as the doorman delivers it.
type Message struct {
	// SessionID is the receiving session's id. Required: a frame whose
	// session_id differs from the session's is dropped by the receiver.
	SessionID string
	// From names the sender ("oo-claude", "chatgpt", ...). Optional: the
	// receiver defaults it to "unknown" and then rates the peer pid.
	From string
	// MsgID is a UUID (8-4-4-4-12 hex) the transcript's origin.msg_id will
	// carry: how a send is matched to the model having seen it. Required.
	MsgID string
	// Priority defaults to [PriorityNext].
	Priority Priority
	// Text is the message content: non-empty UTF-8 without NUL.
	Text string
	// Token, when set, is sent in an auth frame first on the connection. On
	// Linux it is optional and changes nothing.
	Token station.Token
}

type authFrame struct {
	Type  string `json:"type"`
	Token string `json:"token"`
}

type userFrame struct {
	Type      string      `json:"type"`
	SessionID string      `json:"session_id"`
	From      string      `json:"from,omitempty"`
	MsgID     string      `json:"msg_id"`
	Priority  Priority    `json:"priority"`
	Message   userMessage `json:"message"`
}

type userMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Validate reports the first field that keeps m from being written, as a
// [*MessageError]. It does not check the size; [Message.Frames] does.
func (m Message) Validate() error {
	bad := func(field, reason string) error {
		return &MessageError{Field: field, Reason: reason, Err: ErrInvalidMessage}
	}
	if m.SessionID == "" {
		return bad("session_id", "empty")
	}
	if reason := badText(m.SessionID, false); reason != "" {
		return bad("session_id", reason)
	}
	if reason := badText(m.From, false); reason != "" {
		return bad("from", reason)
	}
	if !station.IsSessionID(m.MsgID) { // a canonical UUID: the only msg_id the receiver keeps
		return bad("msg_id", "not a UUID")
	}
	switch m.Priority {
	case "", PriorityNow, PriorityNext, PriorityLater:
	default:
		return bad("priority", "not now, next or later")
	}
	if m.Text == "" {
		return bad("text", "empty")
	}
	if reason := badText(m.Text, true); reason != "" {
		return bad("text", reason)
	}
	if reason := badText(m.Token.Reveal(), false); reason != "" {
		return bad("token", reason)
	}
	return nil
}

// badText says why s cannot travel unchanged: JSON would replace invalid
// UTF-8, a NUL is undeliverable, and identifiers carry no control characters.
func badText(s string, multiline bool) string {
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	for _, r := range s {
		switch {
		case r == 0:
			return "contains NUL"
		case multiline:
		case r < 0x20 || r == 0x7f:
			return "contains a control character"
		}
	}
	return ""
}

// Frames returns the bytes of one delivery: the auth frame when a token is
// set, then the user frame, each one line of JSON ending in "\n". Text is
// not HTML-escaped; control characters, U+2028 and U+2029 are escaped, so
// no frame spans two lines.
func (m Message) Frames() ([]byte, error) { return m.appendFrames(nil, true) }

func (m Message) appendFrames(dst []byte, withAuth bool) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if withAuth && !m.Token.IsZero() {
		if err := enc.Encode(authFrame{Type: "auth", Token: m.Token.Reveal()}); err != nil {
			return nil, &MessageError{Field: "token", Reason: "cannot be encoded", Err: ErrInvalidMessage}
		}
	}
	p := m.Priority
	if p == "" {
		p = defaultPriority
	}
	f := userFrame{
		Type:      "user",
		SessionID: m.SessionID,
		From:      m.From,
		MsgID:     m.MsgID,
		Priority:  p,
		Message:   userMessage{Role: "user", Content: m.Text},
	}
	if err := enc.Encode(f); err != nil {
		return nil, &MessageError{Field: "frames", Reason: "cannot be encoded", Err: ErrInvalidMessage}
	}
	if buf.Len() > maxWriteBytes {
		return nil, &MessageError{Field: "frames", Reason: "over 1,000,000 bytes", Err: ErrTooLarge}
	}
	return buf.Bytes(), nil
}
