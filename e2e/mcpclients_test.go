package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// mcpClientsEnv names the directory whose node_modules hold the official
// MCP clients pinned in mcp-clients.version (scripts/install-mcp-clients.sh
// installs them and prints it; scripts/test.sh exports it).
const mcpClientsEnv = "OO_CLAUDE_E2E_MCP_CLIENTS"

// mcpClients returns that directory, or skips the test (fails it under
// CI=true).
func mcpClients(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(mcpClientsEnv)
	if dir == "" {
		const why = "set " + mcpClientsEnv + ": run scripts/test.sh or export " + mcpClientsEnv + "=$(scripts/install-mcp-clients.sh)"
		if os.Getenv("CI") == "true" {
			t.Fatal("the official MCP clients are missing and CI=true forbids skipping: " + why)
		}
		t.Skip(why)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("%s is set but node is missing: %v", mcpClientsEnv, err)
	}
	return dir
}

// mcpClientEnv is the environment of a doorman the clients start: a home
// of its own, no session among its ancestors (it answers, writing nothing).
func mcpClientEnv(t *testing.T) []string {
	root := t.TempDir()
	return append(os.Environ(),
		"HOME="+root, "CLAUDE_CONFIG_DIR="+filepath.Join(root, "cfg"),
		"OO_CLAUDE_INBOX_DIR="+filepath.Join(root, "inbox"),
		"OO_CLAUDE_STATE_DIR="+filepath.Join(root, "state"),
		"OO_CLAUDE_OBSERVATORY_DIR="+filepath.Join(root, "obs"))
}

// TestOfficialClients: the official TypeScript MCP client v2, pinned to each
// revision in turn and in auto mode, and the MCP Inspector CLI in each of
// its protocol eras, against the real `oo-claude doorman --mcp`: connect,
// list the tool, call it, have a call with an argument its inputSchema
// forbids refused, ping (the client, in the revisions that have it; the
// Inspector CLI has no ping) and close. The client v2 validates every
// result against its own schemas: on the server before issue 21 it failed
// tools/list in 2026-07-28 and auto ("Invalid result for tools/list …
// ttlMs").
func TestOfficialClients(t *testing.T) {
	dir := mcpClients(t)
	bin := ooClaude(t)
	script, err := filepath.Abs("testdata/tsclient.mjs")
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, name string, args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = mcpClientEnv(t)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil && len(out) == 0 {
			t.Fatalf("%s: %v\n%s", filepath.Base(name), err, stderr.String())
		}
		return out
	}
	for _, mode := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "auto"} {
		t.Run("client v2 "+mode, func(t *testing.T) {
			out := run(t, "node", script, dir, mode, bin, "doorman", "--mcp")
			var r struct {
				Version string   `json:"version"`
				Tools   []string `json:"tools"`
				IsError bool     `json:"isError"`
				State   string   `json:"state"`
				Refused *string  `json:"refused"`
				Ping    bool     `json:"ping"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("client output %q: %v", out, err)
			}
			want := mode
			if mode == "auto" {
				want = "2026-07-28"
			}
			switch {
			case r.Version != want:
				t.Errorf("negotiated %q, want %q", r.Version, want)
			case !slices.Contains(r.Tools, "claude_inbox_status"):
				t.Errorf("tools %q", r.Tools)
			case r.IsError || r.State != "not-descendant":
				t.Errorf("tools/call: isError %v, state %q", r.IsError, r.State)
			case r.Refused == nil:
				t.Error("a call with a forbidden argument was not refused")
			case (want < "2026-07-28") != r.Ping:
				t.Errorf("ping %v", r.Ping)
			}
		})
	}
	inspector := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
	for _, era := range []string{"legacy", "auto", "modern"} {
		t.Run("inspector "+era, func(t *testing.T) {
			cli := func(args ...string) map[string]json.RawMessage {
				args = append([]string{"--cli", "--protocol-era", era, "--format", "json", "-q"}, args...)
				out := run(t, inspector, append(args, bin, "doorman", "--mcp")...)
				var m map[string]json.RawMessage
				if err := json.Unmarshal(out, &m); err != nil {
					t.Fatalf("inspector %q: %q: %v", args, out, err)
				}
				return m
			}
			if m := cli("--method", "tools/list"); !strings.Contains(string(m["result"]), `"name":"claude_inbox_status"`) {
				t.Errorf("tools/list: %s", m)
			}
			if m := cli("--method", "tools/call", "--tool-name", "claude_inbox_status", "--tool-args-json", "{}"); m["result"] == nil || strings.Contains(string(m["result"]), `"isError":true`) {
				t.Errorf("tools/call: %s", m)
			}
			if m := cli("--method", "tools/call", "--tool-name", "claude_inbox_status", "--tool-args-json", `{"verbose":true}`); !strings.Contains(string(m["result"]), `"isError":true`) && !strings.Contains(string(m["error"]), "tool_is_error") {
				t.Errorf("tools/call with a forbidden argument: %s", m)
			}
		})
	}
}
