package doorman_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
)

func TestInvokedAsDoorman(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"doorman", "--mcp"}, true},
		{nil, false},
		{[]string{"doorman"}, false},
		{[]string{"--mcp"}, false},
		{[]string{"--mcp", "doorman"}, false},
		{[]string{"doorman", "--mcp", "--once"}, false},
		{[]string{"doorman", "--allow-foreground"}, false},
		{[]string{"doorman", "-mcp"}, false},
		{[]string{"-test.run=TestX"}, false},
	} {
		if got := doorman.InvokedAsDoorman(tc.args); got != tc.want {
			t.Errorf("InvokedAsDoorman(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestServeIfInvoked runs this test binary as Claude Code runs a program's
// own doorman, "<program> doorman --mcp" (TestMain calls ServeIfInvoked
// first): it answers MCP on stdio, the tool reports the follow loop, and
// it exits 0 at stdin's end without running a test. A bad knob exits 2.
func TestServeIfInvoked(t *testing.T) {
	st := fakestation.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(t *testing.T, env []string, stdin string) (stdout, stderr string, code int) {
		t.Helper()
		c := exec.CommandContext(ctx, os.Args[0], "doorman", "--mcp")
		c.Env = append(st.Env(), env...)
		c.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			code = ee.ExitCode()
		default:
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	t.Run("serves", func(t *testing.T) {
		in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + doorman.ToolName + `","arguments":{}}}` + "\n"
		stdout, stderr, code := run(t, nil, in)
		if code != 0 {
			t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
		}
		if strings.Contains(stdout, "PASS") || strings.Contains(stdout, "ok ") || strings.Contains(stdout, "--- ") {
			t.Errorf("the doorman ran the tests too; stdout:\n%s", stdout)
		}
		var answers []struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		sc := bufio.NewScanner(strings.NewReader(stdout))
		for sc.Scan() {
			var a struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				t.Fatalf("stdout carries more than JSON-RPC: %q", sc.Text())
			}
			answers = append(answers, a)
		}
		if len(answers) != 2 || answers[0].ID != 1 || answers[1].ID != 2 {
			t.Fatalf("answers %+v, want ids 1 and 2; stdout:\n%s", answers, stdout)
		}
		if !strings.Contains(string(answers[0].Result), `"name":"`+doorman.ServerName+`"`) {
			t.Errorf("initialize answer %s does not name %s", answers[0].Result, doorman.ServerName)
		}
		// Not a session's child: the loop says so and writes nothing.
		if !strings.Contains(string(answers[1].Result), string(inboxv1.StateNotDescendant)) {
			t.Errorf("tool answer %s, want state %s", answers[1].Result, inboxv1.StateNotDescendant)
		}
		if ents, _ := os.ReadDir(st.Paths.InboxDir); len(ents) != 0 {
			t.Errorf("a doorman without a session wrote %d files into the inbox directory", len(ents))
		}
	})
	t.Run("bad knob", func(t *testing.T) {
		_, stderr, code := run(t, []string{"OO_CLAUDE_DOORMAN_POLL_S=soon"}, "")
		if code != 2 || !strings.Contains(stderr, "OO_CLAUDE_DOORMAN_POLL_S") {
			t.Errorf("exit %d, stderr %q; want 2 naming the knob", code, stderr)
		}
	})
}
