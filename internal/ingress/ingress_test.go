package ingress

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAdmit(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type step struct {
		key, body string
		at        float64
	}
	tests := []struct {
		name  string
		g     Guard
		steps []step
		want  []Verdict
	}{
		{"an identical body within the window is dropped, after it taken",
			Guard{}, []step{{"a", "x", 0}, {"a", "x", 29.9}, {"a", "x", 60}},
			[]Verdict{Admitted, Duplicate, Admitted}},
		{"the window is per sender",
			Guard{}, []step{{"a", "x", 0}, {"b", "x", 1}}, []Verdict{Admitted, Admitted}},
		{"a bucket of two refilled at 1/s",
			Guard{Capacity: 2, RefillPerSecond: 1}, []step{{"a", "1", 0}, {"a", "2", 0}, {"a", "3", 0.5}, {"a", "4", 1}, {"a", "5", 1}},
			[]Verdict{Admitted, Admitted, RateLimited, Admitted, RateLimited}},
		{"a duplicate takes no token",
			Guard{Capacity: 1, RefillPerSecond: 0.001}, []step{{"a", "x", 0}, {"a", "x", 1}, {"a", "y", 2}},
			[]Verdict{Admitted, Duplicate, RateLimited}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := NewTable(tt.g)
			var got []Verdict
			for _, s := range tt.steps {
				got = append(got, tb.Admit(s.key, s.body, at(s.at)))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKey(t *testing.T) {
	for _, tt := range []struct {
		from string
		want string
	}{{"", "pid:7"}, {"unknown", "pid:7"}, {"oo-claude", "from:oo-claude"}, {"pid:7", "from:pid:7"}} {
		if got := Key(tt.from, 7); got != tt.want {
			t.Errorf("Key(%q, 7) = %q, want %q", tt.from, got, tt.want)
		}
	}
}

// TestWaitAgreesWithAdmit: the pacer's question (how long to wait) and the
// fake's (what the guard does) are one model: Wait is zero exactly when
// Admit admits, and after waiting Wait the frame is admitted.
func TestWaitAgreesWithAdmit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	g := Guard{Capacity: 3, RefillPerSecond: 2, DedupWindow: 700 * time.Millisecond}
	a, b := NewTable(g), NewTable(g)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 2000 {
		now = now.Add(time.Duration(r.IntN(400)) * time.Millisecond)
		key := []string{"k1", "k2"}[r.IntN(2)]
		body := []string{"x", "y", "z"}[r.IntN(3)]
		wait := a.Wait(key, body, now)
		v := a.Admit(key, body, now)
		if (wait == 0) != (v == Admitted) {
			t.Fatalf("step %d: Wait %v but Admit %v", i, wait, v)
		}
		// The pacer's way: wait, then deliver; the guard must take it.
		if w := b.Wait(key, body, now); w > 0 {
			now = now.Add(w + time.Millisecond) // the time passes for both
			if got := b.Admit(key, body, now); got != Admitted {
				t.Fatalf("step %d: after waiting %v the guard says %v", i, w, got)
			}
		} else {
			b.Take(key, body, now)
		}
	}
}

func TestMemory(t *testing.T) {
	if got, want := (Guard{}).Memory(), 60*time.Second; got != want {
		t.Errorf("default memory %v, want %v (30 tokens at 0.5/s)", got, want)
	}
	if got, want := (Guard{Capacity: 1, RefillPerSecond: 10, DedupWindow: time.Minute}).Memory(), time.Minute; got != want {
		t.Errorf("memory %v, want %v (the window)", got, want)
	}
}
