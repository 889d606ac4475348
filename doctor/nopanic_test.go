package doctor_test

import (
	"context"
	"testing"

	"github.com/oo-family/oo-claude/doctor"
)

// TestZeroOptionsNoPanic: Run with zero Options reports (findings for the
// missing binary and directories), never panics, and lists every check.
func TestZeroOptionsNoPanic(t *testing.T) {
	rep := doctor.Run(context.Background(), doctor.Options{})
	if rep.OK() {
		t.Errorf("zero options: no findings: %+v", rep)
	}
	if len(rep.Checks) != 10 {
		t.Errorf("%d checks, want 10: %+v", len(rep.Checks), rep.Checks)
	}
}
