package doormancmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/inboxv1"
)

// TestMainRefuses: a command line the doorman program does not take, or a
// bad knob, is exit 2 with the reason on stderr, before any doorman runs.
func TestMainRefuses(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no verb", []string{"--mcp"}, nil, `do not start with "doorman"`},
		{"no mode", []string{"doorman"}, nil, "refuses to run without --allow-foreground"},
		{"mcp with more", []string{"doorman", "--mcp", "--once"}, nil, "--mcp takes no other flag"},
		{"unknown", []string{"doorman", "--mcp", "--bogus"}, nil, `unknown argument "--bogus"`},
		{"bad knob", []string{"doorman", "--allow-foreground", "--once"}, map[string]string{"OO_CLAUDE_DOOR_SETTLE_S": "soon"}, "OO_CLAUDE_DOOR_SETTLE_S"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(k string) string {
				if k == "HOME" {
					return home
				}
				return c.env[k]
			}
			var out, errb bytes.Buffer
			code := Main(context.Background(), c.args, strings.NewReader(""), &out, &errb, getenv)
			if code != exitUsage || !strings.HasPrefix(errb.String(), "oo-claude: ") || !strings.Contains(errb.String(), c.want) || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q on stderr", code, out.String(), errb.String(), c.want)
			}
		})
	}
}

// TestExitCode: the foreground doorman's documented codes.
func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{&doorman.IdentityError{State: inboxv1.StateNotDescendant, Detail: "x"}, exitNotHere},
		{errors.New("door closed"), ExitDeliveryFailed},
	} {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
