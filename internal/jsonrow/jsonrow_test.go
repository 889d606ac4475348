package jsonrow_test

import (
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/jsonrow"
)

func TestTimes(t *testing.T) {
	at := time.Date(2026, 11, 30, 13, 0, 0, 123456789, time.FixedZone("CET", 3600))
	if got, want := jsonrow.FormatTime(at), "2026-11-30T12:00:00.123Z"; got != want {
		t.Errorf("FormatTime = %q, want %q", got, want)
	}
	if ts, ms := jsonrow.Stamp(at); ts != jsonrow.FormatTime(at) || ms != at.UnixMilli() {
		t.Errorf("Stamp = %q, %d", ts, ms)
	}
	for _, s := range []string{"2026-11-30T12:00:00.123Z", "2026-11-30T12:00:00.123+00:00", "2026-11-30T12:00:00.123", "2026-11-30 12:00:00.123Z"} {
		got, err := jsonrow.ParseTime(s)
		if err != nil || !got.Equal(at.Truncate(time.Millisecond)) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", s, got, err, at.Truncate(time.Millisecond))
		}
	}
	for _, s := range []string{"", "yesterday", "2026-13-01T00:00:00Z"} {
		if _, err := jsonrow.ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = nil error", s)
		}
	}
	if s := jsonrow.Seconds(1500*time.Microsecond + 2*time.Second); *s != 2.001 {
		t.Errorf("Seconds = %v, want 2.001 (milliseconds kept)", *s)
	}
}
