package inbox

// The contract's types and constants, moved to package inboxv1. This file
// lets the module build until every use names inboxv1 directly; the move
// script rewrites the uses and deletes it.

import "github.com/oo-family/oo-claude/inboxv1"

type (
	Files         = inboxv1.Files
	LineError     = inboxv1.LineError
	AckClass      = inboxv1.AckClass
	Ack           = inboxv1.Ack
	State         = inboxv1.State
	Heartbeat     = inboxv1.Heartbeat
	PendingSource = inboxv1.PendingSource
	Inbox         = inboxv1.Inbox
	Doorman       = inboxv1.Doorman
	NullString    = inboxv1.NullString
)

var (
	FilesFor      = inboxv1.FilesFor
	CheckPriority = inboxv1.CheckPriority

	ErrEmptyLine   = inboxv1.ErrEmptyLine
	ErrNewline     = inboxv1.ErrNewline
	ErrLineTooLong = inboxv1.ErrLineTooLong
	ErrInvalidUTF8 = inboxv1.ErrInvalidUTF8
	ErrNUL         = inboxv1.ErrNUL
	ErrBadFrom     = inboxv1.ErrBadFrom
	ErrBadPriority = inboxv1.ErrBadPriority
)

const (
	MaxLineBytes  = inboxv1.MaxLineBytes
	DefaultFrom   = inboxv1.DefaultFrom
	Version       = inboxv1.Version
	Antenna       = inboxv1.Antenna
	PriorityNow   = inboxv1.PriorityNow
	PriorityNext  = inboxv1.PriorityNext
	PriorityLater = inboxv1.PriorityLater

	AckDeliveredSteer = inboxv1.AckDeliveredSteer
	AckDeliveredStart = inboxv1.AckDeliveredStart
	AckRefused        = inboxv1.AckRefused
	ConfirmTranscript = inboxv1.ConfirmTranscript
	ConfirmSettle     = inboxv1.ConfirmSettle

	FreshFor                 = inboxv1.FreshFor
	StateFollowing           = inboxv1.StateFollowing
	StateStandby             = inboxv1.StateStandby
	StateStopped             = inboxv1.StateStopped
	StateSwitched            = inboxv1.StateSwitched
	StateSilenced            = inboxv1.StateSilenced
	StateUntrusted           = inboxv1.StateUntrusted
	StateSocketNotMine       = inboxv1.StateSocketNotMine
	StateNoDoor              = inboxv1.StateNoDoor
	StateNoSessionID         = inboxv1.StateNoSessionID
	StateNotDescendant       = inboxv1.StateNotDescendant
	StateSessionMismatch     = inboxv1.StateSessionMismatch
	StateSessionUnverifiable = inboxv1.StateSessionUnverifiable
	StatePeerMismatch        = inboxv1.StatePeerMismatch

	PendingNotQueued         = inboxv1.ReasonReceiverDidNotQueue
	PendingAckUnwritable     = inboxv1.ReasonAckUnwritable
	PendingBadToken          = inboxv1.ReasonBadToken
	PendingAttemptUnwritable = inboxv1.ReasonAttemptUnwritable

	NotFreshMissing      = inboxv1.ReasonHeartbeatMissing
	NotFreshUnreadable   = inboxv1.ReasonHeartbeatUnreadable
	NotFreshStale        = inboxv1.ReasonHeartbeatStale
	NotFreshState        = inboxv1.ReasonDoormanState
	NotFreshPIDGone      = inboxv1.ReasonDoormanGone
	NotFreshOtherSession = inboxv1.ReasonOtherSession

	LineReasonEmpty         = inboxv1.ReasonEmpty
	LineReasonNewline       = inboxv1.ReasonNewline
	LineReasonTooLong       = inboxv1.ReasonTooLong
	LineReasonInvalidUTF8   = inboxv1.ReasonInvalidUTF8
	LineReasonNUL           = inboxv1.ReasonNUL
	LineReasonUndeliverable = inboxv1.ReasonUndeliverable

	PendingFromOffset = inboxv1.PendingFromOffset
	PendingFromAcks   = inboxv1.PendingFromAcks
	PendingNoInbox    = inboxv1.PendingNoInbox
)
