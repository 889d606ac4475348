package inbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/inbox"
)

// BenchmarkThrottle is one admitted line's throttle decision (lock, read
// the ledger, record the send) with a ledger that already holds keys
// other (session, sender) pairs, as a station of that many sessions
// messaged within the day leaves it.
func BenchmarkThrottle(b *testing.B) {
	for _, keys := range []int{1, 500} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			// A clock that moves past the interval at every decision, so
			// one key is admitted each time and the ledger keeps its size.
			now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
			th := inbox.ThrottleFor(b.TempDir(), 30*time.Second, func() time.Time { return now })
			ctx := context.Background()
			for i := 0; i < keys; i++ {
				sid := fmt.Sprintf("dddddddd-0000-4000-8000-%012d", i)
				if _, err := th.Do(ctx, sid, "mama", func() error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				now = now.Add(31 * time.Second)
				adm, err := th.Do(ctx, "eeeeeeee-0000-4000-8000-000000000000", "bench", func() error { return nil })
				if err != nil || !adm.Admitted {
					b.Fatalf("%+v %v", adm, err)
				}
			}
		})
	}
}
