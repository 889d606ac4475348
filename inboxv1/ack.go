package inboxv1

// AckClass is the class an ack records for a line.
type AckClass string

// Ack classes. Refused is oo-claude's extension for a line the doorman cannot
// deliver (Ack.Reason says why); it is acked once and never blocks later
// lines. The strings are claudeinbox's classes of the same names.
const (
	AckDeliveredSteer AckClass = "delivered-steer" // the line went into a running turn (the receiver was busy)
	AckDeliveredStart AckClass = "delivered-start" // the line started a turn (the receiver was idle)
	AckRefused        AckClass = "refused"         // the doorman will not deliver the line
)

// How a delivered-* ack was confirmed (Ack.Confirm).
const (
	// ConfirmTranscript: the receiver's enqueue row for the line was seen
	// in its transcript.
	ConfirmTranscript = "transcript"
	// ConfirmSettle: the transcript could not be located; the door did
	// not hang up within the settle after the write.
	ConfirmSettle = "settle"
)

// Ack is one line of <inbox>.ack, appended by the doorman once per line it
// handled: contract v1's fields, then oo-claude's extensions.
type Ack struct {
	// TS is when the doorman acked the line (RFC 3339, UTC).
	TS string `json:"ts"`
	// SHA256 is the hex sha256 of the line's bytes without its newline:
	// the key a sender matches its line's ack by.
	SHA256 string `json:"sha256"`
	// SessionID is the session the doorman delivered to.
	SessionID string `json:"session_id"`
	// PeerStatus is the receiver's status when the line went through the
	// door: busy or idle.
	PeerStatus string `json:"peer_status"`
	// Class is what became of the line.
	Class AckClass `json:"class"`
	// MsgID is the door frame's message id; "" when refused.
	MsgID string `json:"msg_id"`

	// LineOffset is the line's byte offset in the inbox; nil in a v1
	// doorman's ack (see [Ack.Matches]).
	LineOffset *int64 `json:"line_offset,omitempty"`
	// Inode is the inbox file's inode.
	Inode uint64 `json:"inode,omitempty"`
	// Gen is the generation of the inbox file the line was read from: a
	// truncated, rewritten or replaced inbox starts a new one, and only
	// the acks of the file's current generation count for its lines.
	// Empty for a file's first generation and in older acks.
	Gen string `json:"gen,omitempty"`
	// From is the line's sender name.
	From string `json:"from,omitempty"`
	// PeerStatusRaw is the receiver's status as its registry row spelt it.
	PeerStatusRaw string `json:"peer_status_raw,omitempty"`
	// DoormanPID is the acking doorman's pid.
	DoormanPID int `json:"doorman_pid,omitempty"`
	// V is the contract version ([Version]).
	V int `json:"v,omitempty"`
	// Reason is why a refused line was refused: a [Reason] (the line
	// rules' reasons, or undeliverable).
	Reason string `json:"reason,omitempty"`
	// PacedMS is how long the line was held back to stay inside the
	// receiver's ingress guard, when it was.
	PacedMS int64 `json:"paced_ms,omitempty"`
	// Confirm says what a delivered-* ack rests on: [ConfirmTranscript]
	// or [ConfirmSettle]. Empty on refused acks and on older doormen's
	// acks.
	Confirm string `json:"confirm,omitempty"`
	// QueuedAt is the timestamp of the receiver's enqueue row, as the
	// receiver wrote it; null when no row was seen (confirm "settle", a
	// refusal).
	QueuedAt *string `json:"queued_at"`
	// Priority is the priority the line went through the door with (now,
	// next, later); empty on refused acks and older doormen's acks.
	Priority string `json:"priority,omitempty"`
}

// Matches reports whether the ack is for the line with this sha256 that
// starts at offset. An ack without line_offset (a v1 doorman's) matches on
// the sha256 alone.
func (a Ack) Matches(sha string, offset int64) bool {
	if a.SHA256 != sha {
		return false
	}
	return a.LineOffset == nil || *a.LineOffset == offset
}
