package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/station"
)

// TestHeadlessSignalsThroughBinary: resume and start interrupted by SIGINT
// or SIGTERM stop claude's process group, as before, and exit 130 or 143
// (128 + the signal), as shells expect, instead of the class's 4; the
// receipt keeps the class and says interrupted.
func TestHeadlessSignalsThroughBinary(t *testing.T) {
	t.Parallel()
	for _, verb := range []string{"start", "resume"} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(verb+"/"+sig.String(), func(t *testing.T) {
				t.Parallel()
				r := newHLRig(t)
				r.fk.Script(fakeclaude.Script{DelayMS: 60_000, Grandchild: true})
				args := []string{"start", "do it", "--session-id", r.sid, "--cwd", r.cwd, "--json"}
				if verb == "resume" {
					r.transcriptFor(t, r.sid)
					args = []string{"resume", r.sid, "say PONG", "--json"}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := command(ctx, t, r.env, args...)
				var out, errb strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				waitUntil(t, "claude call", func() bool {
					c := r.fk.Calls("claude")
					return len(c) == 1 && c[0].Grandchild > 0
				})
				cmd.Process.Signal(sig)
				code := exitOf(t, cmd)
				if want := 128 + int(sig); code != want {
					t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, want, out.String(), errb.String())
				}
				c := r.fk.Calls("claude")[0]
				for _, pid := range []int{c.PID, c.Grandchild} {
					if (station.Proc{}).Alive(pid, "") {
						t.Errorf("pid %d survived the interrupted %s", pid, verb)
					}
				}
				rec := r.receipts(t)
				want := map[string]string{"start": "failed", "resume": "error"}[verb]
				if len(rec) != 1 || rec[0]["class"] != want || !strings.Contains(strings.ToLower(anyString(rec[0]["reason"])), "interrupted") {
					t.Errorf("receipts %v, want one of class %s saying interrupted", rec, want)
				}
			})
		}
	}
}

func anyString(v any) string {
	s, _ := v.(string)
	return s
}
