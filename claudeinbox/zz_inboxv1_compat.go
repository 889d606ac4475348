package claudeinbox

// The Reason vocabulary, moved to package inboxv1, and Reply, which is
// receipt.Reply. This file lets the module build until every use names
// inboxv1 (receipt) directly; the move script rewrites the uses and
// deletes it.

import (
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/receipt"
)

type (
	Reason = inboxv1.Reason
	Reply  = receipt.Reply
)

const (
	PriorityNow   = inboxv1.PriorityNow
	PriorityNext  = inboxv1.PriorityNext
	PriorityLater = inboxv1.PriorityLater

	ReasonEmpty               = inboxv1.ReasonEmpty
	ReasonNewline             = inboxv1.ReasonNewline
	ReasonTooLong             = inboxv1.ReasonTooLong
	ReasonInvalidUTF8         = inboxv1.ReasonInvalidUTF8
	ReasonNUL                 = inboxv1.ReasonNUL
	ReasonUndeliverable       = inboxv1.ReasonUndeliverable
	ReasonDoormanRefused      = inboxv1.ReasonDoormanRefused
	ReasonReceiverDidNotQueue = inboxv1.ReasonReceiverDidNotQueue
	ReasonAckUnwritable       = inboxv1.ReasonAckUnwritable
	ReasonBadToken            = inboxv1.ReasonBadToken
	ReasonAttemptUnwritable   = inboxv1.ReasonAttemptUnwritable
	ReasonBadFrom             = inboxv1.ReasonBadFrom
	ReasonBadPriority         = inboxv1.ReasonBadPriority
	ReasonUnknownTarget       = inboxv1.ReasonUnknownTarget
	ReasonAmbiguousTarget     = inboxv1.ReasonAmbiguousTarget
	ReasonBadTarget           = inboxv1.ReasonBadTarget
	ReasonSymlink             = inboxv1.ReasonSymlink
	ReasonNotRegular          = inboxv1.ReasonNotRegular
	ReasonUntrusted           = inboxv1.ReasonUntrusted
	ReasonIO                  = inboxv1.ReasonIO
	ReasonBadOption           = inboxv1.ReasonBadOption
	ReasonCanceled            = inboxv1.ReasonCanceled
	ReasonThrottled           = inboxv1.ReasonThrottled
	ReasonUnknownSession      = inboxv1.ReasonUnknownSession
	ReasonInboxDirMismatch    = inboxv1.ReasonInboxDirMismatch
	ReasonSelfSend            = inboxv1.ReasonSelfSend
	ReasonModelSendBudget     = inboxv1.ReasonModelSendBudget
	ReasonTaggedLine          = inboxv1.ReasonTaggedLine
	ReasonWaitTimeout         = inboxv1.ReasonWaitTimeout
	ReasonSessionEnded        = inboxv1.ReasonSessionEnded
	ReasonInterrupted         = inboxv1.ReasonInterrupted
	ReasonHeartbeatMissing    = inboxv1.ReasonHeartbeatMissing
	ReasonHeartbeatUnreadable = inboxv1.ReasonHeartbeatUnreadable
	ReasonHeartbeatStale      = inboxv1.ReasonHeartbeatStale
	ReasonDoormanState        = inboxv1.ReasonDoormanState
	ReasonDoormanGone         = inboxv1.ReasonDoormanGone
	ReasonOtherSession        = inboxv1.ReasonOtherSession
)
