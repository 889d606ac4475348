package doorman_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/doorman"
)

// Defect 1, stale offset: an inbox truncated and refilled while no doorman
// runs keeps its inode, so the old offset looks valid and lands inside a
// new line. The doorman verifies the offset against the last ack before
// trusting it, and resumes at the first unacked line: every new line is
// delivered whole, none as a fragment.
func TestStaleOffsetAfterRewrite(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := claudeinbox.FilesFor(w.fs.Paths.InboxDir, sid)
	for _, l := range []string{"[a 📡] 1", "[a 📡] 2", "[a 📡] 3", "[a 📡] 4"} {
		w.appendLine(sid, l)
	}
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if err := os.Truncate(files.Inbox, 0); err != nil {
		t.Fatal(err)
	}
	var fresh []string
	for i := range 4 {
		l := "[b 📡] a new line, longer than the old ones, number " + string(rune('1'+i))
		fresh = append(fresh, l)
		w.appendLine(sid, l)
	}
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	got := contents(w.waitQueued(8))[4:]
	if diff := cmp.Diff(fresh, got); diff != "" {
		t.Errorf("delivered after the rewrite (-want +got):\n%s", diff)
	}
	for _, c := range got {
		if !strings.HasPrefix(c, "[b 📡] ") {
			t.Errorf("delivered a fragment %q", c)
		}
	}
}
