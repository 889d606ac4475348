package transcript

import "context"

// FollowMaxRow is Follow with a smaller bound on one row than the 64 MiB
// every Follower has, so a test can pass it without writing 64 MiB.
func FollowMaxRow(ctx context.Context, path string, from int64, opts FollowOptions, maxRow int) *Follower {
	f := Follow(ctx, path, from, opts)
	f.maxRow = maxRow
	return f
}

// FollowerWaker reports whether f's wake-up is armed (it is at its first
// wait) and whether it polls (no file events could be set up).
func FollowerWaker(f *Follower) (armed, polling bool) {
	return f.waker != nil, f.waker.Polling()
}
