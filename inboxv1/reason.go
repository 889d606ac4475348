package inboxv1

// Reason says why a send was refused, dropped or queued (claudeinbox's
// Verdict.Reason, the receipt's reason), why a doorman refused a line
// (Ack.Reason, which a refused verdict carries) and why a heartbeat is not
// fresh (Doorman.NotFreshBecause). It is the one vocabulary of these
// reasons. Its values are the strings the receipts and acks hold; a
// doorman of a later version may write others.
type Reason string

// Error returns the reason itself, so a Reason is an errors.Is target: a
// refusal's error (a send's *claudeinbox.RefusedError, a
// headless.RefusedError) matches the reason it carries.
func (r Reason) Error() string { return string(r) }

// The line rules. A sender refuses such a line before it writes anything;
// a doorman acks one it finds in an inbox as refused with the same reason
// (one table maps each rule to its reason for both). A line the rules
// refuse for a cause that is none of these is [ReasonUndeliverable].
const (
	ReasonEmpty       Reason = "empty"        // the line is empty, only spaces, or a sender tag and nothing else
	ReasonNewline     Reason = "newline"      // the line holds a newline or carriage return
	ReasonTooLong     Reason = "too-long"     // the line (with its tag) is over 16 KiB
	ReasonInvalidUTF8 Reason = "invalid-utf8" // the line is not valid UTF-8
	ReasonNUL         Reason = "nul"          // the line holds a NUL byte
)

// Why a doorman refused a line it read (claudeinbox's Refused verdict after
// the ack).
const (
	ReasonUndeliverable  Reason = "undeliverable"   // the door client rejected the line, or the line rules refused it for no rule of their own: it would never be delivered
	ReasonTorn           Reason = "torn"            // the line is the start of one a writer left unfinished (a short write), which the next writer ended with a NUL: never delivered
	ReasonDoormanRefused Reason = "doorman-refused" // the ack says refused and gives no reason
)

// Why a doorman holds lines back (claudeinbox's DoormanStatus.Pending:
// the heartbeat's last_error starts with it). [ReasonReceiverDidNotQueue] is also the
// reason of a line the doorman refused after its last write was not
// queued either.
const (
	// The door took the line but the receiver wrote no enqueue row for it
	// within the confirmation bound: the line stays pending and is written
	// again only once that cannot double it.
	ReasonReceiverDidNotQueue Reason = "receiver-did-not-queue"
	// The line was queued but its ack could not be written: the doorman
	// retries the ack, never the delivery.
	ReasonAckUnwritable Reason = "ack-unwritable"
	// The session's messaging token cannot be carried in a door frame:
	// nothing was written.
	ReasonBadToken Reason = "bad-token"
	// The doorman cannot record the door write it is about to make:
	// nothing was written.
	ReasonAttemptUnwritable Reason = "attempt-unwritable"
)

// Why a sender refused a request (claudeinbox.Request) before writing the
// line, or dropped it.
const (
	ReasonBadFrom         Reason = "bad-from"         // Request.From (or the line's own sender) breaks the sender-name rule
	ReasonBadPriority     Reason = "bad-priority"     // Request.Priority is not now, next or later
	ReasonUnknownTarget   Reason = "unknown-target"   // no session matches Request.Target
	ReasonAmbiguousTarget Reason = "ambiguous-target" // more than one session matches Request.Target
	ReasonBadTarget       Reason = "bad-target"       // Request.Target cannot name a session
	ReasonSymlink         Reason = "symlink"          // a symlink sits at the inbox path
	ReasonNotRegular      Reason = "not-regular"      // a FIFO, socket, device node or directory sits at the inbox path
	ReasonUntrusted       Reason = "untrusted"        // the inbox directory or file is another user's or writable by others
	ReasonIO              Reason = "io-error"         // the inbox, the throttle ledger or the station could not be read or written
	ReasonBadOption       Reason = "bad-option"       // the sender itself (claudeinbox.Sender) is misconfigured
	ReasonCanceled        Reason = "canceled"         // the context ended before anything was written
	ReasonThrottled       Reason = "throttled"        // dropped: the sender's last line to this session is too recent
	// A full id that names no live session and has no transcript on this
	// station (a mistyped id), sent without Request.ExpectStart.
	ReasonUnknownSession Reason = "unknown-session"
	// The session runs and its doorman follows another inbox directory
	// than the sender's: a line written here would never be read.
	ReasonInboxDirMismatch Reason = "inbox-dir-mismatch"
)

// Why the doorman's station_send tool refused a line the session's own
// model asked it to send, before any send.
const (
	ReasonSelfSend        Reason = "self-send"         // the target is the sending session itself
	ReasonModelSendBudget Reason = "model-send-budget" // the session's model used up its sends for this minute
	ReasonTaggedLine      Reason = "tagged-line"       // the model's line starts with a sender tag: the sender is the session, set by its doorman
)

// Why the seen or reply wait (claudeinbox's Sender.SeenWait and
// Sender.ReplyWait) ended without the row or the answer it waited for:
// Verdict.WaitEnd, the receipt's wait_end. A transcript that cannot be
// watched or read is [ReasonIO].
const (
	ReasonWaitTimeout  Reason = "wait-timeout"  // the wait ran out while the session ran
	ReasonSessionEnded Reason = "session-ended" // the session ended: its process exited, its registry row went, or it switched to another session id
	ReasonInterrupted  Reason = "interrupted"   // the caller's context ended (Verdict.InterruptedBy says what ended it)
)

// Why the session's doorman is not fresh: Doorman.NotFreshBecause, the
// reason of claudeinbox's QueuedNoDoorman verdict (and its
// DoormanStatus.NotFreshBecause).
const (
	ReasonHeartbeatMissing    Reason = "missing"       // no heartbeat file
	ReasonHeartbeatUnreadable Reason = "unreadable"    // the heartbeat does not parse
	ReasonHeartbeatStale      Reason = "stale"         // last_seen older than 15 s
	ReasonDoormanState        Reason = "state"         // the doorman is stopped, switched, standby, ...
	ReasonDoormanGone         Reason = "pid-gone"      // the doorman's process is gone
	ReasonOtherSession        Reason = "other-session" // the heartbeat names another session
)
