package claudeproc_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/internal/claudeproc"
)

const sid = "0b5c8a1e-1111-4222-8333-444455556666"

// claudeEnv40 is 40 CLAUDE* variables: the 18 of the keep-list and 22 that
// must never reach a child (the caller's door, token, identity, ...).
func claudeEnv40() []string {
	drop := []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_MESSAGING_SOCKET",
		"CLAUDE_CODE_MESSAGING_TOKEN", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_CHILD_NOTES_DIR", "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS",
		"CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_SESSION_ATTENDED", "CLAUDE_CODE_SDK_HAS_HOST_AUTH_REFRESH",
		"CLAUDE_CODE_HOST_SESSION_ID", "CLAUDE_PID", "CLAUDE_AGENT_SDK_VERSION", "CLAUDE_AGENT_SDK_CLIENT_APP",
		"CLAUDE_CODE_SESSION_KIND", "CLAUDE_CODE_SESSION_NAME", "CLAUDE_CODE_PROJECT_DIR_NAME", "CLAUDE_CODE_TMPDIR",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR", "CLAUDEX"}
	var env []string
	for _, n := range claudeproc.KeepEnv() {
		env = append(env, n+"=keep-"+n)
	}
	for _, n := range drop {
		env = append(env, n+"=drop-"+n)
	}
	return env
}

func TestScrubEnvExactly18(t *testing.T) {
	in := append([]string{"HOME=/h", "OO_CLAUDE_STATE_DIR=/s", "ANTHROPIC_BASE_URL=http://x"}, claudeEnv40()...)
	if n := len(in) - 3; n != 40 {
		t.Fatalf("%d CLAUDE* variables, want 40", n)
	}
	// Descriptors must be numbers to be kept.
	for i, kv := range in {
		if strings.HasSuffix(strings.SplitN(kv, "=", 2)[0], "_FILE_DESCRIPTOR") {
			in[i] = strings.SplitN(kv, "=", 2)[0] + "=" + fmt.Sprint(10+i)
		}
	}
	got, fds := claudeproc.ScrubEnv(in)
	var claude []string
	for _, kv := range got {
		if strings.HasPrefix(kv, "CLAUDE") {
			claude = append(claude, strings.SplitN(kv, "=", 2)[0])
		}
	}
	want := claudeproc.KeepEnv()
	slices.Sort(want)
	slices.Sort(claude)
	if d := cmp.Diff(want, claude); d != "" {
		t.Errorf("CLAUDE* kept (-want +got):\n%s", d)
	}
	for _, kv := range []string{"HOME=/h", "OO_CLAUDE_STATE_DIR=/s", "ANTHROPIC_BASE_URL=http://x",
		"CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR=3", "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR=4"} {
		if !slices.Contains(got, kv) {
			t.Errorf("%s missing from %v", kv, got)
		}
	}
	if len(fds) != 2 || fds[0].ChildFD != 3 || fds[1].ChildFD != 4 {
		t.Errorf("fds %+v", fds)
	}
}

func TestUnitEnvNamesHoldNoSecret(t *testing.T) {
	for _, n := range claudeproc.UnitEnvNames() {
		if slices.Contains(claudeproc.CredentialEnv(), n) || strings.HasPrefix(n, "ANTHROPIC_") || strings.HasPrefix(n, "AWS_") ||
			strings.HasPrefix(n, "CLOUD_ML_") || strings.Contains(n, "TOKEN") || strings.Contains(n, "MESSAGING") || n == "CLAUDE_CODE_SESSION_ID" {
			t.Errorf("%s must not be passed to a unit", n)
		}
	}
}

func TestNamesSession(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"claude", "-p", "--resume", sid, "x"}, true},
		{[]string{"claude", "-r", sid}, true},
		{[]string{"node", "cli.js", "--session-id=" + strings.ToUpper(sid)}, true},
		{[]string{"oo-claude", "resume", sid, "x"}, false},
		{[]string{"claude", "--resume"}, false},
		{[]string{"echo", "--resume " + sid}, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if got := claudeproc.NamesSession(tt.args, sid); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestArgv(t *testing.T) {
	cfg := claudeproc.DoormanConfig("/opt/oo/oo-claude")
	got := claudeproc.ResumeArgv(claudeproc.ResumeArgs{SessionID: sid, Model: "claude-haiku-5-5", MaxTurns: 1, MCPConfig: cfg, Budget: 0.25})
	want := []string{"-p", "--resume", sid, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--model", "claude-haiku-5-5", "--max-turns", "1",
		"--tools", "", "--permission-mode", "dontAsk", "--mcp-config", cfg, "--strict-mcp-config", "--max-budget-usd", "0.25"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("resume (-want +got):\n%s", d)
	}
	if cfg != `{"mcpServers":{"claude-inbox":{"type":"stdio","command":"/opt/oo/oo-claude","args":["doorman","--mcp"]}}}` {
		t.Errorf("doorman config %s", cfg)
	}
	base := []string{"-p", "--session-id", sid, "--output-format", "stream-json", "--verbose", "--model", "m", "--max-turns", "4",
		"--permission-mode", "dontAsk", "--tools", "Read"}
	read := "Read"
	tests := []struct {
		name    string
		allowed *string
		mcp     string
		strict  bool
		tail    []string
	}{
		{"injected", &read, cfg, true, []string{"--allowedTools", "Read", "--mcp-config", cfg, "--strict-mcp-config"}},
		{"none", nil, "", true, []string{"--strict-mcp-config"}},
		{"user-scope", nil, "", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := claudeproc.StartArgv(claudeproc.StartArgs{SessionID: sid, Model: "m", MaxTurns: 4, Tools: "Read",
				AllowedTools: tt.allowed, MCPConfig: tt.mcp, StrictMCP: tt.strict, Budget: 0.5, Prompt: "go"})
			want := append(append(append([]string{}, base...), tt.tail...), "--max-budget-usd", "0.5", "go")
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// The process scan reads every form of the real CLI's parser (commander):
// the e2e suite checks the same forms against the real binary.
func TestNamesSessionCLIForms(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"claude", "-r" + sid}, true},
		{[]string{"claude", "-pr", sid}, true},
		{[]string{"claude", "-pr" + sid}, true},
		{[]string{"claude", "-r=" + sid}, true},
		{[]string{"claude", "--resume=" + sid}, true},
		{[]string{"claude", "--session-id", sid}, true},
		{[]string{"claude", "-p", "--", "-r", sid}, false}, // after --: a prompt
		{[]string{"claude", "-dr", sid}, false},            // -d takes "r" as its filter
		{[]string{"claude", "-r" + sid + "x"}, false},      // another id
		{[]string{"claude", "-p", "--resume"}, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if got := claudeproc.NamesSession(tt.args, sid); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestUnitNameShortID: an id shorter than 8 characters names a unit
// instead of panicking (it once sliced sid[:8]).
func TestUnitNameShortID(t *testing.T) {
	for _, tt := range []struct{ sid, want string }{
		{"", "oo-claude-"},
		{"abc", "oo-claude-abc"},
		{"0b5c8a1e", "oo-claude-0b5c8a1e"},
		{sid, "oo-claude-0b5c8a1e"},
	} {
		if got := claudeproc.UnitName(tt.sid); got != tt.want {
			t.Errorf("UnitName(%q) = %q, want %q", tt.sid, got, tt.want)
		}
	}
}
