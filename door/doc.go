// Package door is the client for a Claude Code session's messaging socket,
// "the door".
//
// It guarantees three things. A [Conn] is only ever returned for a listener
// whose SO_PEERCRED credentials are the ones the caller expected: the
// caller's own user always, and the process [Dialer.ExpectPID] when set; on
// a mismatch nothing is written and a [*PeerMismatchError] is returned.
// Every frame it writes is exactly what the receiver accepts: one line of JSON
// per frame (an optional auth frame, then the user frame), validated before a
// byte goes out, far below the receiver's 1,048,576-character line buffer.
// And one delivery is one write followed by a settle: the receiver never
// answers, so a refusal shows only as a close, and a close (or any byte) seen
// within the settle is reported as [ErrRefused].
//
// The messaging token travels as a [station.Token]: it is revealed only while
// the auth frame is marshalled and never appears in an error or a String.
//
// "The door accepted it" is not proof that the model saw it: the receiver
// may still drop a line (a duplicate within 30 s, a sender over its rate, a
// session id that differs). The transcript row carrying the frame's msg_id is
// the proof.
package door
