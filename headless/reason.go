package headless

import (
	"github.com/oo-family/oo-claude/inboxv1"
)

// Why a resume or a start was refused before anything ran
// (RefusedError.Reason, the receipt's and the result file's reason): the
// one vocabulary of oo-claude's reasons, [inboxv1.Reason]. A refusal's
// error matches its reason with errors.Is:
//
//	errors.Is(err, headless.ReasonSessionInUse)
const (
	ReasonBadSessionID  inboxv1.Reason = "bad-session-id"  // not a session id (UUID)
	ReasonBadLine       inboxv1.Reason = "bad-line"        // the line or prompt breaks a line rule, or starts with "-"
	ReasonBadModel      inboxv1.Reason = "bad-model"       // the model name could be read as a flag or holds control characters
	ReasonBadTools      inboxv1.Reason = "bad-tools"       // the tools or allowed-tools list, likewise
	ReasonBadLimits     inboxv1.Reason = "bad-limits"      // max turns, budget or timeout not above 0
	ReasonBadBinary     inboxv1.Reason = "bad-binary"      // the claude binary, Self or systemd-run is not an absolute path
	ReasonBadName       inboxv1.Reason = "bad-name"        // the name is over 80 characters or holds control characters
	ReasonBadDoorman    inboxv1.Reason = "bad-doorman"     // an unknown doorman mode, or no doorman for a start that must be steerable
	ReasonBadOut        inboxv1.Reason = "bad-out"         // the result file is not absolute or not a file oo-claude may replace
	ReasonBadInbox      inboxv1.Reason = "bad-inbox"       // the session's inbox is one its doorman would not trust
	ReasonBadLock       inboxv1.Reason = "bad-lock"        // the session's lock file is a symlink, not regular or untrusted
	ReasonLock          inboxv1.Reason = "lock"            // the session's lock could not be taken
	ReasonBadResultFile inboxv1.Reason = "bad-result-file" // RunUnit: not the result file of a detached start
	ReasonBadParent     inboxv1.Reason = "bad-parent"      // StartRequest.Parent is not a session id, or names the session itself
	// ReasonRegistryUnreadable: the registry or the process table cannot
	// be read ([ErrRegistryUnreadable]).
	ReasonRegistryUnreadable  inboxv1.Reason = "registry-unreadable"
	ReasonNoTranscript        inboxv1.Reason = "no-transcript"        // [ErrNoTranscript]
	ReasonAmbiguousTranscript inboxv1.Reason = "ambiguous-transcript" // several transcripts (transcript.ErrAmbiguous)
	ReasonNoUsableCWD         inboxv1.Reason = "no-usable-cwd"        // [ErrNoCWD]
	ReasonCWDMismatch         inboxv1.Reason = "cwd-mismatch"         // [ErrCWDMismatch]
	ReasonNothingToDeliver    inboxv1.Reason = "nothing-to-deliver"   // [ErrNothingToDeliver]
	ReasonSessionInUse        inboxv1.Reason = "session-in-use"       // [ErrSessionInUse]
)
