package headless

import "github.com/oo-family/oo-claude/claudeinbox"

// Why a resume or a start was refused before anything ran
// (RefusedError.Reason, the receipt's and the result file's reason): the
// one vocabulary of oo-claude's reasons, [claudeinbox.Reason]. A refusal's
// error matches its reason with errors.Is:
//
//	errors.Is(err, headless.ReasonSessionInUse)
const (
	ReasonBadSessionID  claudeinbox.Reason = "bad-session-id"  // not a session id (UUID)
	ReasonBadLine       claudeinbox.Reason = "bad-line"        // the line or prompt breaks a line rule, or starts with "-"
	ReasonBadModel      claudeinbox.Reason = "bad-model"       // the model name could be read as a flag or holds control characters
	ReasonBadTools      claudeinbox.Reason = "bad-tools"       // the tools or allowed-tools list, likewise
	ReasonBadLimits     claudeinbox.Reason = "bad-limits"      // max turns, budget or timeout not above 0
	ReasonBadBinary     claudeinbox.Reason = "bad-binary"      // the claude binary, Self or systemd-run is not an absolute path
	ReasonBadName       claudeinbox.Reason = "bad-name"        // the name is over 80 characters or holds control characters
	ReasonBadDoorman    claudeinbox.Reason = "bad-doorman"     // an unknown doorman mode, or no doorman for a start that must be steerable
	ReasonBadOut        claudeinbox.Reason = "bad-out"         // the result file is not absolute or not a file oo-claude may replace
	ReasonBadInbox      claudeinbox.Reason = "bad-inbox"       // the session's inbox is one its doorman would not trust
	ReasonBadLock       claudeinbox.Reason = "bad-lock"        // the session's lock file is a symlink, not regular or untrusted
	ReasonLock          claudeinbox.Reason = "lock"            // the session's lock could not be taken
	ReasonBadResultFile claudeinbox.Reason = "bad-result-file" // RunUnit: not the result file of a detached start
	ReasonBadParent     claudeinbox.Reason = "bad-parent"      // StartRequest.Parent is not a session id, or names the session itself
	// ReasonRegistryUnreadable: the registry or the process table cannot
	// be read ([ErrRegistryUnreadable]).
	ReasonRegistryUnreadable  claudeinbox.Reason = "registry-unreadable"
	ReasonNoTranscript        claudeinbox.Reason = "no-transcript"        // [ErrNoTranscript]
	ReasonAmbiguousTranscript claudeinbox.Reason = "ambiguous-transcript" // several transcripts (transcript.ErrAmbiguous)
	ReasonNoUsableCWD         claudeinbox.Reason = "no-usable-cwd"        // [ErrNoCWD]
	ReasonCWDMismatch         claudeinbox.Reason = "cwd-mismatch"         // [ErrCWDMismatch]
	ReasonNothingToDeliver    claudeinbox.Reason = "nothing-to-deliver"   // [ErrNothingToDeliver]
	ReasonSessionInUse        claudeinbox.Reason = "session-in-use"       // [ErrSessionInUse]
)
