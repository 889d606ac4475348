package claudeproc_test

import (
	"fmt"

	"github.com/oo-family/oo-claude/internal/claudeproc"
)

func ExampleDoormanConfig() {
	fmt.Println(claudeproc.DoormanConfig("/usr/local/bin/oo-claude"))
	// Output: {"mcpServers":{"claude-inbox":{"type":"stdio","command":"/usr/local/bin/oo-claude","args":["doorman","--mcp"]}}}
}

func ExampleScrubEnv() {
	env, fds := claudeproc.ScrubEnv([]string{
		"HOME=/home/u",
		"CLAUDECODE=1",
		"CLAUDE_CODE_MESSAGING_TOKEN=0123456789abcdef",
		"CLAUDE_CONFIG_DIR=/home/u/.claude",
		"CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR=7",
	})
	fmt.Println(env)
	fmt.Println(fds[0].Name, fds[0].FD, "->", fds[0].ChildFD)
	fmt.Println(len(claudeproc.KeepEnv()), "CLAUDE* names pass")
	// Output:
	// [HOME=/home/u CLAUDE_CONFIG_DIR=/home/u/.claude CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR=3]
	// CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR 7 -> 3
	// 18 CLAUDE* names pass
}

func ExampleSystemdArgv() {
	fmt.Println(claudeproc.SystemdArgv("ffde609f-0000-4000-8000-000000000000", 900e9, []string{"-E", "HOME"}, "/usr/local/bin/oo-claude", "/s/start/ffde609f.json"))
	// Output: [--user --unit oo-claude-ffde609f --same-dir --collect --no-block --property=RuntimeMaxSec=930 -E HOME -- /usr/local/bin/oo-claude start --foreground-unit /s/start/ffde609f.json]
}
