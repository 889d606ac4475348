package claudeinbox

// Class is a send verdict's class, as the v0.1 contract names it
// (COMPATIBILITY.md, "Verdict classes and exit codes").
type Class string

// The classes of a send, with their exit codes (see [Class.ExitCode]).
const (
	DeliveredSteer  Class = "delivered-steer"   // acked; the session was busy: the line surfaces at the next tool round (0)
	DeliveredStart  Class = "delivered-start"   // acked; the session was idle: the line starts a turn (0)
	Refused         Class = "refused"           // bad line, bad sender, ambiguous or unknown target, or the doorman refused it (1)
	QueuedNoDoorman Class = "queued-no-doorman" // the session runs but has no fresh doorman: the line waits in the file (3)
	QueuedOffline   Class = "queued-offline"    // no running session with this id: the line waits (3)
	Timeout         Class = "timeout"           // fresh heartbeat, no ack within the wait: the line waits; do not resend (5)
	Dropped         Class = "dropped"           // throttled: the line was not written; resend after Verdict.RetryAfter (6)
	// Interrupted is oo-claude's addition: the context ended (a signal:
	// Verdict.InterruptedBy) while Send waited for the ack of a line it
	// had written to a fresh doorman's inbox. The line waits in the file;
	// do not resend it (130, the shell's code for SIGINT; the CLI exits
	// 128 + the signal's number).
	Interrupted Class = "interrupted"
)

// Classes returns every class a send can end in, in the contract's order
// (its table in COMPATIBILITY.md, "Verdict classes and exit codes"), then
// oo-claude's Interrupted: the list the CLI's help prints its exit codes
// from. A new class is added here with its constant.
func Classes() []Class {
	return []Class{DeliveredSteer, DeliveredStart, Refused, QueuedNoDoorman, QueuedOffline, Timeout, Dropped, Interrupted}
}

// ExitCode returns the process exit code the contract assigns to the class.
func (c Class) ExitCode() int {
	switch c {
	case DeliveredSteer, DeliveredStart:
		return 0
	case Refused:
		return 1
	case QueuedNoDoorman, QueuedOffline:
		return 3
	case Timeout:
		return 5
	case Dropped:
		return 6
	case Interrupted:
		return 130
	}
	return 1
}

// Delivered reports whether the doorman acked the line as carried through
// the door. It is not proof that the model saw it: the transcript row whose
// origin.msg_id equals the ack's msg_id is.
func (c Class) Delivered() bool { return c == DeliveredSteer || c == DeliveredStart }

// Waiting reports whether the line is in the file and waits for a doorman.
func (c Class) Waiting() bool {
	return c == QueuedNoDoorman || c == QueuedOffline || c == Timeout || c == Interrupted
}
