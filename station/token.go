package station

import "fmt"

// Token is a messaging token: the peerToken of a session's key file or the
// CLAUDE_CODE_MESSAGING_TOKEN a session hands its MCP children. It is a
// secret. Every way of printing it (fmt verbs, JSON) yields "[redacted]";
// only [Token.Reveal] returns the value, for the one place that must write
// it to the door.
type Token string

const redacted = "[redacted]"

// Reveal returns the token's value. Call it only to put the token on the wire.
func (t Token) Reveal() string { return string(t) }

// IsZero reports whether no token is set.
func (t Token) IsZero() bool { return t == "" }

// String returns "[redacted]", or "" for an empty token.
func (t Token) String() string {
	if t == "" {
		return ""
	}
	return redacted
}

// GoString returns the redacted form, so %#v does not leak the value.
func (t Token) GoString() string { return fmt.Sprintf("station.Token(%q)", t.String()) }

// Format redacts the token under every fmt verb.
func (t Token) Format(f fmt.State, verb rune) { fmt.Fprint(f, t.String()) }

// MarshalJSON redacts the token, so a row that embeds one by mistake still
// carries no secret.
func (t Token) MarshalJSON() ([]byte, error) { return []byte(`"` + t.String() + `"`), nil }

// MarshalText redacts the token.
func (t Token) MarshalText() ([]byte, error) { return []byte(t.String()), nil }
