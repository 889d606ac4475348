package observatory_test

import (
	"testing"

	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/observatory"
)

// TestPendingSourcesAreTheInboxReaders: the PendingSource constants are
// spelled as literals here (go doc shows no internal name) and are the
// values the inbox files' one reader (internal/inbox) counts by.
func TestPendingSourcesAreTheInboxReaders(t *testing.T) {
	for _, tt := range []struct{ public, internal observatory.PendingSource }{
		{observatory.PendingFromOffset, inbox.PendingFromOffset},
		{observatory.PendingFromAcks, inbox.PendingFromAcks},
		{observatory.PendingNoInbox, inbox.PendingNoInbox},
	} {
		if tt.public != tt.internal {
			t.Errorf("observatory says %q where internal/inbox says %q", tt.public, tt.internal)
		}
	}
}
