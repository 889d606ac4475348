// Package claudeinbox sends lines to Claude Code sessions through their
// inboxes: the sender's side of the Claude inbox file contract v1.
//
// A sender never writes to a session's door: it appends one line to
// <inbox dir>/<session id>.inbox, and the session's own doorman (package
// doorman) carries the line through the door and appends an ack. [Sender.Send]
// does the whole sender's part: it checks the line, resolves the target,
// applies the per-(target, sender) throttle, appends the line in one
// O_APPEND write, reads the doorman's heartbeat and waits for the ack that
// matches the line's sha256 and byte offset, woken by file events. It
// returns a [Verdict] whose [Class] maps to the contract's exit codes
// ([Class.ExitCode]; COMPATIBILITY.md, "Verdict classes and exit codes")
// and whose [inboxv1.Reason] says why a line was refused,
// dropped or queued. With [Sender.SeenWait] it then waits for the proof
// that the model saw a delivered line (a [Witness] reading the session's
// transcript), which fills Verdict.Seen and never changes the class; with
// [Sender.ReplyWait] it also waits for the session's answer to the line (a
// [ReplyWitness]), which fills Verdict.Reply. [NewSender] sets the real
// witness (transcript.Witness), so either wait needs no set-up. Either wait ends as soon as
// the session does (its claude process's exit is an event, a pidfd; its
// registry row going, or naming another session, too), and a ctx that ends
// returns what the wait had found with ctx's error; Verdict.WaitEnd says
// why a wait ended without what it waited for ([inboxv1.ReasonWaitTimeout],
// [inboxv1.ReasonSessionEnded], [inboxv1.ReasonInterrupted]). Request.Priority
// ([inboxv1.PriorityNow], [inboxv1.PriorityNext], [inboxv1.PriorityLater]) travels in the line's
// structured form to the door frame and the ack.
//
// [Verdict.Next] says what a program does next with the line, one [Next]
// per verdict: [NextDone], [NextWait] (the line waits in the inbox: never
// resend it), [NextRetryAfter] (resend after Verdict.RetryAfter, which
// [Sender.SendRetry] does once, honouring ctx), [NextRefused],
// [NextCanceled] or [NextFailed]. Request.Waits gives one call its own ack,
// seen and reply waits without copying the Sender. A heartbeat's
// last_error is DoormanStatus.LastError, and the reason it starts with
// when the doorman holds lines back ([inboxv1.ReasonReceiverDidNotQueue], ...) is
// DoormanStatus.Pending.
//
// A refused send returns a *[RefusedError] (errors.Is [ErrRefused]) whose
// Reason is the verdict's and which wraps its cause for errors.Is and
// errors.As: a target's *station.TargetError, an *fs.PathError (Op
// "send append") for a file that could not be written.
//
// Send refuses, before it writes anything, a line the doorman would refuse
// ([inboxv1.ReasonEmpty], [inboxv1.ReasonNewline], [inboxv1.ReasonTooLong], [inboxv1.ReasonInvalidUTF8],
// [inboxv1.ReasonNUL]), a bad sender name ([inboxv1.ReasonBadFrom]), an inbox another user
// could have written ([inboxv1.ReasonUntrusted]: another user's, or writable by
// others), one that holds a FIFO, socket, device or directory
// ([inboxv1.ReasonNotRegular]) or a symlink ([inboxv1.ReasonSymlink]); every file is opened
// without following a symlink or blocking, and a line is never written
// into an inbox that is being removed.
package claudeinbox
