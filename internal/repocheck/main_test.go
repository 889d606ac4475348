package repocheck

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the fake session TestExamplesOutsideTheModule runs
// leaves no goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
