// Package e2e holds the end-to-end tests that run the real, pinned Claude
// Code CLI and check the facts oo-claude relies on; it has no code of its
// own besides this comment.
//
// The CLI is the version pinned in claude-code.version at the repository
// root. scripts/install-claude-code.sh installs it with npm into a cache
// directory outside the module and prints the binary's path; the tests find
// it through OO_CLAUDE_E2E_CLAUDE and skip without it:
//
//	export OO_CLAUDE_E2E_CLAUDE=$(scripts/install-claude-code.sh)
//	go test ./e2e/ -count=1
//
// Every test runs the CLI offline and alone: a short temp root of its own
// for HOME, CLAUDE_CONFIG_DIR, XDG_RUNTIME_DIR (so the messaging socket's
// path stays under the 103-byte limit), TMPDIR and the working directory;
// an environment built from scratch (only PATH is inherited, so a suite
// started inside a Claude Code session does not leak CLAUDECODE or a
// session id into the sessions under test); ANTHROPIC_BASE_URL pointing at
// a fakes/fakemodel server that scripts the model's replies (text, tool
// calls such as Bash "sleep 2") and records every request; and the switches
// that keep the CLI from calling out (DISABLE_TELEMETRY,
// DISABLE_ERROR_REPORTING, DISABLE_AUTOUPDATER,
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, proxies pointing at the fake so
// a stray call is recorded, CLAUDE_CODE_MAX_RETRIES=0).
//
// MCP stdio facts are observed with a probe server that is this test binary
// re-executed (TestMain switches on OO_E2E_PROBE_MODE): it records its
// environment, parent, the methods it receives and the signals it gets,
// and can write lines to its session's door as a descendant of the
// session. A test that writes to the door as a foreign process does so
// from the test process itself.
//
// oo-claude itself is tested the same way: TestMain builds the binary once
// from cli/oo-claude, and the doorman program beside it from
// cli/oo-claude-doorman, with the go toolchain that runs the tests (or
// takes a prebuilt pair from OO_CLAUDE_E2E_OOCLAUDE), sessions get it as their
// doorman through --mcp-config/--strict-mcp-config (or the user-scope
// registration), and the verbs (send, resume, start, sessions, riders,
// read) run as separate processes with knobs pointing into the test's
// dirs. These tests prove the steer end to end: the send verdict, the line
// in the model's next request, and the transcript's origin naming the
// doorman's pid and the receipt's msg_id; the gate in default and bypass
// modes; queue-then-replay; a doorman started from the session's own tool
// writing nothing; no line lost at the real stop sequence; resume and
// start; sessions, riders and read on real sessions. TestSteerLatency logs
// send → the model's next request (OO_CLAUDE_E2E_STEER_SAMPLES samples).
// With OO_CLAUDE_E2E_RECORD=<dir>, the steered, resumed and sub-agent
// transcripts are copied there with neutral paths, for the transcript
// package's goldens.
//
// Interactive sessions (the TUI) run too, under tmux on a private server
// per session (interactive_test.go: startInteractive returns the session's
// pid, id, tmux target and transcript path, and types a user's prompt):
// an idle session takes a sent line as delivered-start and starts a turn
// with it, a busy one as delivered-steer and absorbs it into the running
// turn. Without tmux these tests skip, or fail under CI=true;
// scripts/test.sh installs tmux with apt-get when it is missing.
//
// Each test keeps its sessions short (a scripted tool call of two seconds
// keeps a session busy long enough to observe), and independent tests run
// in parallel, so the suite finishes well within a few minutes on two
// cores.
package e2e
