package doorman

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"syscall"

	"github.com/oo-family/oo-claude/station"
)

// mcpArgs are the arguments a session starts its doorman with, after the
// program's path: what headless injects in a session's MCP config for its
// Self (claudeproc.DoormanConfig), and what `claude mcp add … -- <program>
// doorman --mcp` registers. ServeIfInvoked serves exactly these.
var mcpArgs = []string{"doorman", "--mcp"}

// ServeIfInvoked makes the running program its own doorman. Call it first
// in main. When the process was started with exactly the doorman's MCP
// arguments (os.Args[1:] is "doorman", "--mcp": what headless injects for
// its Self and what `claude mcp add … -- <program> doorman --mcp`
// registers), it does what `oo-claude doorman --mcp` does: the session's MCP
// stdio server on stdin and stdout and the follow loop, logs on stderr, the
// knobs from the process's environment over the station file, until
// stdin's end, SIGINT, SIGTERM or ctx's end; then it exits the process (0;
// 2 when a knob is bad, with the reason on stderr). Otherwise it returns at
// once and main goes on. So a program's own executable can be headless's
// Self. A nil ctx is context.Background().
func ServeIfInvoked(ctx context.Context) {
	if !invokedAsDoorman(os.Args[1:]) {
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	code := serveInvoked(ctx, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// invokedAsDoorman reports whether args (a process's arguments after its
// path) are the doorman's MCP arguments, exactly.
func invokedAsDoorman(args []string) bool { return slices.Equal(args, mcpArgs) }

// serveInvoked is ServeIfInvoked's doorman once it is invoked: the wiring
// of `oo-claude doorman --mcp`, with the process's environment, stdio and
// signals as arguments. It returns the exit code.
func serveInvoked(ctx context.Context, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	env, err := station.LoadEnviron(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "oo-claude doorman: %v\n", err)
		return 2
	}
	cfg, err := station.ConfigFromEnv(env.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "oo-claude doorman: %v\n", err)
		return 2
	}
	d := New(Options{Host: ThisProcess(cfg, env.Getenv), Config: cfg, Mode: ModeMCP, Log: stderr, Version: moduleVersion()})
	// stdin's end or a signal stops it; the loop's fate is the MCP tool's
	// answer, not an exit code (as `oo-claude doorman --mcp`).
	d.ServeMCP(ctx, &Server{In: stdin, Out: stdout})
	return 0
}

// modulePath is this module's path, as a program's build info names it.
const modulePath = "github.com/oo-family/oo-claude"

// moduleVersion is the version of this module the running program was
// built with (its build info: the main module's, or the dependency's),
// for the heartbeat's version and serverInfo; "" when unknown.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if bi.Main.Path == modulePath {
		return bi.Main.Version
	}
	for _, m := range bi.Deps {
		if m.Path == modulePath {
			if m.Replace != nil && m.Replace.Version != "" {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return ""
}
