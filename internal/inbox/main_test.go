package inbox_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/inbox"
	"go.uber.org/goleak"
)

// TestMain doubles as a helper process: with OO_CLAUDE_INBOX_HELPER set the
// test binary runs one throttle decision instead of the tests, so the
// ledger can be raced by real processes.
func TestMain(m *testing.M) {
	if os.Getenv("OO_CLAUDE_INBOX_HELPER") == "throttle" {
		os.Exit(throttleHelper())
	}
	goleak.VerifyTestMain(m)
}

// throttleHelper takes one throttle decision for (HELPER_SID, HELPER_FROM)
// and prints "won" or "dropped".
func throttleHelper() int {
	th := inbox.ThrottleFor(os.Getenv("HELPER_STATE"), 30*time.Second, nil)
	adm, err := th.Do(context.Background(), os.Getenv("HELPER_SID"), os.Getenv("HELPER_FROM"), func() error { return nil })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if adm.Admitted {
		fmt.Println("won")
	} else {
		fmt.Println("dropped")
	}
	return 0
}
