package fakeowner

// The inbox contract's types, which are package inboxv1's. This file lets
// the module build until every use names inboxv1 directly; the move
// script rewrites the uses and deletes it.

import "github.com/oo-family/oo-claude/inboxv1"

type (
	Files     = inboxv1.Files
	Ack       = inboxv1.Ack
	AckClass  = inboxv1.AckClass
	Heartbeat = inboxv1.Heartbeat
)
