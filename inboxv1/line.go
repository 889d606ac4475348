package inboxv1

import (
	"errors"
	"fmt"
)

// MaxLineBytes is the largest line the contract allows, without its newline.
const MaxLineBytes = 16 * 1024

// DefaultFrom is the sender name used when none is given.
const DefaultFrom = "oo-claude"

// Version is the contract version written in acks (Ack.V) and structured
// lines (their "v").
const Version = 1

// Antenna is the mark of a sender tag: a line "[<sender> 📡] …" names its
// sender.
const Antenna = "📡"

// Line errors: the line rules a line (or a sender name) breaks. Each is
// wrapped by a *[LineError]; a doorman acks such a line as refused with
// the [Reason] of the rule.
var (
	ErrEmptyLine   = errors.New("empty line")              // empty, only spaces, or a sender tag and nothing else
	ErrNewline     = errors.New("line holds a newline")    // a newline or carriage return
	ErrLineTooLong = errors.New("line longer than 16 KiB") // over MaxLineBytes
	ErrInvalidUTF8 = errors.New("line is not valid UTF-8") // not valid UTF-8
	ErrNUL         = errors.New("line holds a NUL byte")   // a NUL byte
	ErrBadFrom     = errors.New("bad sender name")         // a sender name that breaks the sender-name rule
)

// LineError is a line (or sender name) that the contract does not allow.
type LineError struct {
	// Bytes is the length of the line (or name), in bytes.
	Bytes int
	// Err is the rule it breaks: one of the line errors (ErrEmptyLine, ...).
	Err error
}

func (e *LineError) Error() string { return fmt.Sprintf("%v (%d bytes)", e.Err, e.Bytes) }
func (e *LineError) Unwrap() error { return e.Err }

// The receiver's priorities, as a structured line asks for them (its
// "priority") and the door frame carries them.
const (
	// PriorityNow shows the line at once: the receiver aborts the
	// running tool.
	PriorityNow = "now"
	// PriorityNext shows it after the running tool round, or starts a
	// turn when the session is idle: every plain line's priority.
	PriorityNext = "next"
	// PriorityLater runs it as a turn of its own after the running turn
	// ends.
	PriorityLater = "later"
)

// ErrBadPriority: a priority that is not now, next or later.
var ErrBadPriority = errors.New("priority is not now, next or later")

// CheckPriority accepts now, next, later and "" (next); anything else is
// [ErrBadPriority], wrapped.
func CheckPriority(p string) error {
	switch p {
	case "", PriorityNow, PriorityNext, PriorityLater:
		return nil
	}
	return fmt.Errorf("%w: %q", ErrBadPriority, p)
}
