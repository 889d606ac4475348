package repocheck

import (
	"testing"

	"github.com/oo-family/oo-claude/fakes/fakeclaude"

	"go.uber.org/goleak"
)

// TestMain runs the fake claude when the test binary is one (TestNoPanic
// starts it) and checks that the fakes the tests run (a session for
// TestExamplesOutsideTheModule, the door, model and doormen of TestNoPanic)
// leave no goroutine behind.
func TestMain(m *testing.M) {
	fakeclaude.Main()
	goleak.VerifyTestMain(m)
}
