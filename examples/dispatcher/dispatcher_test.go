package dispatcher

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakesession"
	"github.com/oo-family/oo-claude/station"
)

// TestAsk: the dispatcher asks a fake session and gets its scripted answer;
// an unknown session is refused with a cause it can match.
func TestAsk(t *testing.T) {
	s := fakesession.Start(t, fakesession.Options{Name: "builder", Answer: func(line string) fakesession.Turn {
		if strings.Contains(line, "build status") {
			return fakesession.Turn{Tools: []string{"Bash"}, Text: "green: 412 tests passed"}
		}
		return fakesession.Turn{Text: "no idea"}
	}})
	got, err := Ask(context.Background(), s.Station.Paths, "builder", "what is the build status?", 10*time.Second)
	if err != nil || got != "green: 412 tests passed" {
		t.Fatalf("Ask = %q, %v; want the scripted answer", got, err)
	}
	if _, err := Ask(context.Background(), s.Station.Paths, "nobody", "hi", time.Second); !errors.Is(err, station.ErrUnknownTarget) {
		t.Errorf("Ask(nobody) = %v, want station.ErrUnknownTarget", err)
	}
}
