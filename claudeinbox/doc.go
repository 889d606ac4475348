// Package claudeinbox implements the Claude inbox file contract v1 from the
// sender's side, and the shared shapes both sides agree on.
//
// A sender never writes to a session's door: it appends one line to
// <inbox dir>/<session id>.inbox, and the session's own doorman (package
// doorman) carries the line through the door and appends an ack. [Sender.Send]
// does the whole sender's part: it checks the line, resolves the target,
// applies the per-(target, sender) throttle, appends the line in one
// O_APPEND write, reads the doorman's heartbeat and waits for the ack that
// matches the line's sha256 and byte offset, woken by file events. It
// returns a [Verdict] whose [Class] maps to the contract's exit codes
// (COMPATIBILITY.md, "Verdict classes and exit codes"). With
// [Sender.SeenWait] it then waits for the proof that the model saw a
// delivered line (a [Witness] reading the session's transcript), which
// fills Verdict.Seen and never changes the class; with [Sender.ReplyWait]
// it also waits for the session's answer to the line (a [ReplyWitness]),
// which fills Verdict.Reply. Request.Priority (now, next, later) travels in
// the line's structured form to the door frame and the ack. A refused send
// returns a *[RefusedError] that wraps its cause for errors.Is and
// errors.As.
//
// Send refuses, before it writes anything, an inbox that fails [CheckTrust]
// ([ReasonUntrusted]: another user's, or writable by others) or holds a
// FIFO, socket, device or directory ([ReasonNotRegular]) or a symlink
// ([ReasonSymlink]); every file is opened without following a symlink or
// blocking.
//
// An inbox is removed (by oo-claude gc, or a start that failed) only under
// its removal protocol: every writer appends with [AppendInbox] (a shared
// flock on the file it opened, and a check that the path still names it),
// and [RemoveInbox] judges and removes under the doorman's lock and the
// inbox's exclusive flock, so a line is never written into a removed file.
//
// The line rules ([CheckLine], [CheckFrom]), sender tags ([SenderTag],
// [Tagged]), the structured form ([ParseStructured], [Decode]), the
// heartbeat ([Heartbeat], [CheckFreshness]) and the ack ([Ack]) are the
// contract itself; the doorman uses the same definitions.
package claudeinbox
