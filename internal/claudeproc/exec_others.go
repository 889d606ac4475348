//go:build !linux

package claudeproc

import "context"

// RunProcess is not implemented off Linux: process groups, /proc and
// descriptor passing are Linux facts here.
func RunProcess(ctx context.Context, inv Invocation) Outcome {
	return Outcome{ExitCode: -1, Err: ErrNotSupported}
}

// SpawnDetached is not implemented off Linux.
func SpawnDetached(inv Invocation) (int, error) { return 0, ErrNotSupported }
