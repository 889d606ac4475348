package doorman

// The doorman's states and heartbeat, moved to package inboxv1. This file
// lets the module build until every use names inboxv1 directly; the move
// script rewrites the uses and deletes it.

import "github.com/oo-family/oo-claude/inboxv1"

type (
	State     = inboxv1.State
	Heartbeat = inboxv1.Heartbeat
)

const (
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
)
