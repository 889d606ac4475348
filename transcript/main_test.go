package transcript_test

import (
	"testing"

	"go.uber.org/goleak"
)

// WaitSeen runs a file watcher (a goroutine): none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
