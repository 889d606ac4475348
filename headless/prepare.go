package headless

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
)

// runFlags are the claude flags a resume and a start share, and the
// timeout of their run: the one place their defaults and rules are
// applied.
type runFlags struct {
	model    string
	maxTurns int
	budget   float64 // USD
	tools    string
	timeout  time.Duration
}

// defaulted fills the zero fields of f: the model and timeout given (the
// Config's, for a resume or a start), maxTurns, and the default budget.
func (f runFlags) defaulted(model string, maxTurns int, timeout time.Duration) runFlags {
	if f.model == "" {
		f.model = model
	}
	if f.maxTurns == 0 {
		f.maxTurns = maxTurns
	}
	if f.budget == 0 {
		f.budget = defaultBudgetUSD
	}
	if f.timeout == 0 {
		f.timeout = timeout
	}
	return f
}

// check applies the rules every run follows: a model and a tools list that
// cannot be read as a flag, limits above 0 (a finite budget), and an
// absolute claude binary. The reason is "" when f passes.
func (r *Runner) check(f runFlags) (inboxv1.Reason, error) {
	if err := checkWord(f.model, errBadModel, false); err != nil {
		return ReasonBadModel, err
	}
	if err := checkWord(f.tools, errBadTools, true); err != nil {
		return ReasonBadTools, err
	}
	if f.maxTurns < 1 || !positive(f.budget) || f.timeout <= 0 {
		return ReasonBadLimits, errBadLimits
	}
	if !filepath.IsAbs(r.Config.ClaudeBin) {
		return ReasonBadBinary, fmt.Errorf("claude binary %q: %w", r.Config.ClaudeBin, errNotAbsolute)
	}
	return "", nil
}

// checkSelf is the rule of the Self path: absolute.
func checkSelf(self string) (inboxv1.Reason, error) {
	if !filepath.IsAbs(self) {
		return ReasonBadBinary, fmt.Errorf("the Self path %q: %w", self, errNotAbsolute)
	}
	return "", nil
}
