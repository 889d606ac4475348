package observatory

// The inbox state's types, moved to package inboxv1. This file lets the
// module build until every use names inboxv1 directly; the move script
// rewrites the uses and deletes it.

import "github.com/oo-family/oo-claude/inboxv1"

type (
	PendingSource = inboxv1.PendingSource
	Inbox         = inboxv1.Inbox
	Doorman       = inboxv1.Doorman
	NullString    = inboxv1.NullString
)

const (
	PendingFromOffset = inboxv1.PendingFromOffset
	PendingFromAcks   = inboxv1.PendingFromAcks
	PendingNoInbox    = inboxv1.PendingNoInbox
)
