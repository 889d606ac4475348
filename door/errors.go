package door

import (
	"errors"
	"fmt"
)

// Sentinel errors for the conditions callers branch on.
var (
	// ErrPeerMismatch: the process listening on the socket is not the one
	// the caller expected (another user's, or not [Dialer.ExpectPID]).
	// Nothing was written.
	ErrPeerMismatch = errors.New("door: listener is not the expected process")

	// ErrRefused: the receiver closed the connection (or, against the
	// protocol, wrote a byte) within the settle, or before the write ended.
	// The line must be treated as not delivered.
	ErrRefused = errors.New("door: receiver closed the connection")

	// ErrInvalidMessage: the message cannot be written as the receiver
	// accepts it (see [MessageError] for the field).
	ErrInvalidMessage = errors.New("door: invalid message")

	// ErrTooLarge: the frames of one delivery (the auth and user frames
	// together, after JSON escaping) exceed 1,000,000 bytes, a margin below
	// the receiver's 1,048,576-character connection buffer.
	ErrTooLarge = errors.New("door: message too large")

	// ErrNotSupported: the platform has no SO_PEERCRED (door is Linux-only).
	ErrNotSupported = errors.New("door: not supported on this platform")

	// ErrBroken: an earlier Deliver on this [Conn] failed after its write
	// began; dial again.
	ErrBroken = errors.New("door: connection unusable after an earlier error")

	// ErrNotUnixConn: a [Dialer.DialContext] seam returned a connection
	// without a file descriptor to check.
	ErrNotUnixConn = errors.New("door: connection has no file descriptor")
)

// PeerMismatchError says which process listens on Socket when another was
// expected. It matches [ErrPeerMismatch] under errors.Is.
type PeerMismatchError struct {
	Socket  string
	Want    int // the expected pid; 0 when any process of WantUID would do
	Got     int // the listener's pid from SO_PEERCRED
	WantUID int // the expected uid: the caller's effective uid
	GotUID  int // the listener's uid from SO_PEERCRED
}

func (e *PeerMismatchError) Error() string {
	if e.GotUID != e.WantUID {
		return fmt.Sprintf("door: %s: listener pid %d runs as uid %d, want uid %d", e.Socket, e.Got, e.GotUID, e.WantUID)
	}
	return fmt.Sprintf("door: %s: listener pid %d, want %d", e.Socket, e.Got, e.Want)
}

// Is reports whether target is [ErrPeerMismatch].
func (e *PeerMismatchError) Is(target error) bool { return target == ErrPeerMismatch }

// OpError is an error of one step (dial, peercred, write, settle, close) on
// one socket. Err is the cause; syscall causes are wrapped with the call's
// name (an [*os.SyscallError]).
type OpError struct {
	Op     string
	Socket string
	Err    error
}

func (e *OpError) Error() string { return "door: " + e.Op + " " + e.Socket + ": " + fmt.Sprint(e.Err) }

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

// MessageError names the field of a [Message] that cannot be written and
// why. Err is [ErrInvalidMessage] or [ErrTooLarge]. It never carries a
// field's value, so the token and the text stay out of logs.
type MessageError struct {
	Field  string // "session_id", "from", "msg_id", "priority", "text", "token" or "frames"
	Reason string
	Err    error
}

func (e *MessageError) Error() string {
	return fmt.Sprint(e.Err) + ": " + e.Field + ": " + e.Reason
}

// Unwrap returns [ErrInvalidMessage] or [ErrTooLarge].
func (e *MessageError) Unwrap() error { return e.Err }
