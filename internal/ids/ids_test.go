package ids

import (
	"testing"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/station"
)

// TestNew: each id is a canonical version 4 UUID of the RFC 9562 variant,
// as github.com/google/uuid (the library it stands in for) reads it, a
// session id as the station reads one, and no two are alike.
func TestNew(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		s := New()
		u, err := uuid.Parse(s)
		if err != nil {
			t.Fatalf("New() = %q: %v", s, err)
		}
		if u.Version() != 4 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("New() = %q: version %d, variant %v; want 4, RFC 4122/9562", s, u.Version(), u.Variant())
		}
		if u.String() != s {
			t.Fatalf("New() = %q, not canonical (%q)", s, u.String())
		}
		if !station.IsSessionID(s) {
			t.Fatalf("New() = %q: not a session id to the station", s)
		}
		if seen[s] {
			t.Fatalf("New() = %q twice", s)
		}
		seen[s] = true
	}
}

// TestNewIsRandom: outside the version and variant bits, every bit of an
// id is set in some ids and clear in others (a fixed bit would be a
// formatting slip: a byte written twice, a nibble dropped).
func TestNewIsRandom(t *testing.T) {
	var ones, zeros [16]byte
	for range 256 {
		u := uuid.MustParse(New())
		for i, c := range u {
			ones[i] |= c
			zeros[i] |= ^c
		}
	}
	for i := range 16 {
		fixed := byte(0)
		switch i {
		case 6:
			fixed = 0xf0
		case 8:
			fixed = 0xc0
		}
		if ones[i]&^fixed != ^fixed || zeros[i]&^fixed != ^fixed {
			t.Errorf("byte %d: bits seen set %08b, clear %08b; want every bit but %08b both", i, ones[i], zeros[i], fixed)
		}
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		New()
	}
}
