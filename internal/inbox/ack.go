package inbox

import (
	"encoding/json"
	"io"
	"strings"
)

// AckClass is the class an ack records for a line.
type AckClass string

// Ack classes. Refused is oo-claude's extension for a line the doorman cannot
// deliver (Reason says why); it is acked once and never blocks later lines.
const (
	AckDeliveredSteer AckClass = "delivered-steer"
	AckDeliveredStart AckClass = "delivered-start"
	AckRefused        AckClass = "refused"
)

// Ack is one line of <inbox>.ack: contract v1's fields, then the extensions.
type Ack struct {
	TS         string   `json:"ts"`
	SHA256     string   `json:"sha256"`
	SessionID  string   `json:"session_id"`
	PeerStatus string   `json:"peer_status"` // busy | idle
	Class      AckClass `json:"class"`
	MsgID      string   `json:"msg_id"`

	LineOffset *int64 `json:"line_offset,omitempty"`
	Inode      uint64 `json:"inode,omitempty"`
	// Gen is the generation of the inbox file the line was read from
	// (Attempt.Gen): a truncated, rewritten or replaced inbox starts a new
	// one, and only the acks of the file's current generation count for
	// its lines. Empty for a file's first generation and in older acks.
	Gen           string `json:"gen,omitempty"`
	From          string `json:"from,omitempty"`
	PeerStatusRaw string `json:"peer_status_raw,omitempty"`
	DoormanPID    int    `json:"doorman_pid,omitempty"`
	V             int    `json:"v,omitempty"`
	// Reason is why a refused line was refused: a claudeinbox.Reason
	// (the line rules' reasons, or undeliverable).
	Reason string `json:"reason,omitempty"`
	// PacedMS is how long the line was held back to stay inside the
	// receiver's ingress guard, when it was.
	PacedMS int64 `json:"paced_ms,omitempty"`
	// Confirm says what a delivered-* ack rests on: ConfirmTranscript (the
	// receiver's enqueue row for the line was seen) or ConfirmSettle (the
	// transcript could not be located; the door did not hang up within the
	// settle). Empty on refused acks and on older doormen's acks.
	Confirm string `json:"confirm,omitempty"`
	// QueuedAt is the timestamp of the receiver's enqueue row, as the
	// receiver wrote it; null when no row was seen (confirm "settle", a
	// refusal).
	QueuedAt *string `json:"queued_at"`
	// Priority is the priority the line went through the door with (now,
	// next, later); empty on refused acks and older doormen's acks.
	Priority string `json:"priority,omitempty"`
}

// How a delivered-* ack was confirmed (Ack.Confirm).
const (
	ConfirmTranscript = "transcript"
	ConfirmSettle     = "settle"
)

// Matches reports whether the ack is for the line with this sha256 that
// starts at offset. An ack without line_offset (a v1 doorman's) matches on
// the sha256 alone.
func (a Ack) Matches(sha string, offset int64) bool {
	if a.SHA256 != sha {
		return false
	}
	return a.LineOffset == nil || *a.LineOffset == offset
}

// monitorEraPrefix starts the lines of the first, monitor-era doorman's ack
// file ("<ts> read: <first 80 characters>"). They are not JSON.
const monitorEraPrefix = " read: "

// isMonitorEraAck reports whether an ack line is a monitor-era line.
func isMonitorEraAck(line string) bool {
	return !strings.HasPrefix(strings.TrimSpace(line), "{") && strings.Contains(line, monitorEraPrefix)
}

// ScanMonitorEraAcks calls fn with the text of every monitor-era line of
// r ("<ts> read: <text>", the text trimmed), in order, in bounded memory
// as ScanAcks. fn returns false to stop.
func ScanMonitorEraAcks(r io.Reader, fn func(text string) bool) error {
	return scanLines(r, 0, maxAckLine, func(line []byte, _ int64) bool {
		l := string(line)
		if !isMonitorEraAck(l) {
			return true
		}
		_, text, _ := strings.Cut(l, monitorEraPrefix)
		return fn(strings.TrimSpace(text))
	})
}

// ScanAcks calls fn for every JSON ack in r, in order, with the byte offset
// after the ack's line. Lines that are not acks (monitor-era lines, a torn
// last line) are skipped, and so is a line longer than maxAckLine, without
// being held in memory: a read of any ack file is bounded. fn returns false
// to stop.
func ScanAcks(r io.Reader, start int64, fn func(a Ack, end int64) bool) error {
	return scanLines(r, start, maxAckLine, func(line []byte, end int64) bool {
		var a Ack
		if json.Unmarshal(line, &a) == nil && a.SHA256 != "" {
			return fn(a, end)
		}
		return true
	})
}
