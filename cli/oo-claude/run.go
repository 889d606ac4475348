package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"

	"github.com/oo-family/oo-claude/internal/termsafe"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// proc is what the process gives the verbs besides stdio: main passes the
// os package's (osProc), a test its own.
type proc struct {
	getenv     func(string) string
	environ    func() []string        // the base of a child's environment (resume, start)
	getwd      func() (string, error) // start's project directory when --cwd is not given
	getpid     func() int             // this process (doctor, the headless runner)
	executable func() (string, error) // this binary (env.self)
	hostname   func() (string, error) // the station's default name
	username   func() (string, error)
	// program runs a program of oo-claude's (programs.Doorman with
	// doormanreq's argv, programs.Top with topreq's) on the given stdio; nil
	// is execProgram: this process becomes the program beside
	// executable, on the process's own stdio.
	program func(ctx context.Context, name string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error
	// lookProgram finds the program name beside this binary for doctor;
	// nil is findProgram beside executable.
	lookProgram func(name string) (string, error)
	// armed returns once the signal handler is installed
	// (signalContext); nil: there is none to wait for.
	armed func()
}

// osProc is the running process's own.
func osProc() proc {
	return proc{getenv: os.Getenv, environ: os.Environ, getwd: os.Getwd, getpid: os.Getpid, executable: os.Executable,
		hostname: os.Hostname, username: currentUser}
}

// currentUser is the name of the effective user (its uid when the user
// database does not know it).
func currentUser() (string, error) {
	u, err := user.Current()
	if err != nil {
		return strconv.Itoa(os.Geteuid()), nil
	}
	return u.Username, nil
}

// env is what every verb is given: stdio, the environment and the knobs.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// out is stdout as the verbs write it (e.stdout): it keeps the first
	// write error, so that a verb whose output was lost does not exit 0
	// (run). rawStdout is the process's own, for what needs the file (a
	// terminal's size, a hangup, a child's stdio).
	out       *stdoutWriter
	rawStdout io.Writer
	// getenv is the process environment over the station file (knobs
	// reads it); the process environment alone when the file is bad.
	getenv  func(string) string
	environ func() []string
	getwd   func() (string, error)
	pid     int
	// config is read lazily: `version` and usage errors must work even
	// when a knob is bad.
	config func() (station.Config, error)
	// knobs is the environment the knobs are read from: the process's
	// over the station file, read once.
	knobs func() (*station.Environ, error)
	// stationName is this station's name (OO_CLAUDE_STATION or its default).
	stationName func(station.Config) string
	// self is the absolute path of this binary (for the doorman command
	// that start injects and doctor checks).
	self func() (string, error)
	// rawStderr is stderr unescaped, for the live status line only
	// (its \r and erase-to-end are the frame); see status.go.
	rawStderr io.Writer
	// program runs oo-claude's program name with argv on the verb's
	// stdio (the program escapes its own stderr).
	program func(ctx context.Context, name string, argv []string) error
	// lookProgram finds oo-claude's program name (doctor's check).
	lookProgram func(name string) (string, error)
	// armed returns once the signal handler is installed (signalContext):
	// a verb calls it before its first wait or write. run calls it after
	// the parse for every verb but send, whose sender calls it just
	// before the send's first write (Sender.BeforeWrite).
	armed func()
}

func newEnv(stdin io.Reader, stdout, stderr io.Writer, p proc) *env {
	// stderr is for people only: what it shows is escaped (termsafe).
	out := &stdoutWriter{w: stdout}
	e := &env{stdin: stdin, stdout: out, out: out, rawStdout: stdout, stderr: termsafe.NewWriter(stderr), rawStderr: stderr,
		environ: p.environ, getwd: p.getwd, pid: p.getpid(), self: p.executable}
	run := p.program
	if run == nil {
		run = execProgram(p.executable, p.environ)
	}
	e.program = func(ctx context.Context, name string, argv []string) error {
		return run(ctx, name, argv, e.stdin, e.rawStdout, e.rawStderr)
	}
	e.armed = p.armed
	if e.armed == nil {
		e.armed = func() {}
	}
	e.lookProgram = p.lookProgram
	if e.lookProgram == nil {
		e.lookProgram = func(name string) (string, error) { return findProgram(p.executable, name) }
	}
	e.knobs = sync.OnceValues(func() (*station.Environ, error) { return station.LoadEnviron(p.getenv) })
	e.getenv = func(key string) string {
		if k, err := e.knobs(); err == nil {
			return k.Getenv(key)
		}
		return p.getenv(key)
	}
	e.config = func() (station.Config, error) {
		k, err := e.knobs()
		if err != nil {
			return station.Config{}, usagef("%v", err)
		}
		c, err := station.ConfigFromEnv(k.Getenv)
		if err != nil {
			return c, usagef("%v", err)
		}
		return c, nil
	}
	e.stationName = func(c station.Config) string {
		var u, h string
		if p.username != nil {
			u, _ = p.username()
		}
		if p.hostname != nil {
			h, _ = p.hostname()
		}
		return c.StationName(u, h, p.getenv("HOME"))
	}
	return e
}

// human is stdout for human output: control characters, escape sequences
// and bidi overrides in what it prints (transcript text, names, lines,
// versions) are shown as visible escapes. --json output goes to e.stdout
// and keeps the exact text.
func (e *env) human() io.Writer { return termsafe.NewWriter(e.stdout) }

// verb is a subcommand: its name and its constructor (each lives in its
// own file).
type verb struct {
	name string
	make func(*env) *ffcli.Command
}

// verbs lists every subcommand, in the order the usage lists them.
var verbs = []verb{
	{"send", newSendCmd},
	{"doorman", newDoormanCmd},
	{"resume", newResumeCmd},
	{"start", newStartCmd},
	{"read", newReadCmd},
	{"sessions", newSessionsCmd},
	{"riders", newRidersCmd},
	{"watch", newWatchCmd},
	{"top", newTopCmd},
	{"lineage", newLineageCmd},
	{"gc", newGCCmd},
	{"doctor", newDoctorCmd},
	{"receipt", newReceiptCmd},
	{"version", newVersionCmd},
}

// verbsFor is what run builds for args: the verb args[0] names alone (its
// flags and usage are all a run of it needs; the other thirteen's flag
// sets cost every start a sixth of a millisecond), every verb otherwise
// (the usage, help, an unknown verb). Names match as the parse matches
// them, case-blind.
func verbsFor(args []string) []verb {
	if len(args) > 0 {
		for _, v := range verbs {
			if strings.EqualFold(v.name, args[0]) {
				return []verb{v}
			}
		}
	}
	return verbs
}

// armsItself is the verb that calls env.armed itself, later than run
// would: send, whose reads (stdin, the registry, the heartbeat) go on
// beside the handler's start, up to its first write.
const armsItself = "send"

// run is the whole program: main only adds the process's stdio, signals and
// exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, p proc) error {
	e := newEnv(stdin, stdout, stderr, p)
	root := &ffcli.Command{
		Name:       "oo-claude",
		ShortUsage: "oo-claude <verb> [flags] [args]",
		ShortHelp:  "oo-claude reaches the Claude Code sessions of this machine.",
		FlagSet:    flag.NewFlagSet("oo-claude", flag.ContinueOnError),
		UsageFunc:  rootUsage,
	}
	for _, v := range verbsFor(args) {
		root.Subcommands = append(root.Subcommands, v.make(e))
	}
	root.Exec = func(_ context.Context, args []string) error {
		switch {
		case len(args) == 0:
			fmt.Fprint(stderr, rootUsage(root))
			return exitWith(exitUsage)
		case args[0] == "help":
			return help(e, root, args[1:])
		}
		return usagef("unknown verb %q (oo-claude help lists them)", args[0])
	}
	// The flag package prints nothing: a parse error is printed once below,
	// with the verb's usage, and -h prints the usage on stdout.
	quiet(root)
	// Parse and Run are separate so that every parse failure, and only
	// those, is a usage error (exit 2) without matching error strings.
	err := root.Parse(args)
	if err == nil {
		if c, _ := selectedCmd(root, args); c.FlagSet != nil {
			err = emptyValues(c.FlagSet)
		}
	}
	if err == nil {
		if c, _ := selectedCmd(root, args); c.Name != armsItself {
			e.armed()
		}
		err = root.Run(ctx)
	} else if !errors.Is(err, flag.ErrHelp) {
		if u := errors.Unwrap(err); u != nil {
			err = u // the flag package's message, without ff's "error parsing commandline arguments"
		}
		err = &flagError{err.Error()}
	}
	var fe *flagError
	switch {
	case errors.Is(err, flag.ErrHelp):
		c, _ := selectedCmd(root, args)
		_, err := fmt.Fprint(stdout, usageOf(root, c))
		return err
	case errors.As(err, &fe):
		c, path := selectedCmd(root, args)
		where := ""
		if len(path) > 0 {
			where = strings.Join(path, " ") + ": "
		}
		fmt.Fprintf(stderr, "oo-claude: %s%s\n\n%s", where, doubleDash(fe.msg), usageOf(root, c))
		return exitWith(exitUsage)
	}
	if err == nil && e.out.err != nil && !e.out.noted {
		// The verb is not done: what it had to print was lost (a full
		// disk, a closed pipe's EPIPE where SIGPIPE is ignored).
		return &exitError{code: exitFail, err: e.out.err}
	}
	return err
}

// emptyOK are the text flags for which an empty value is a value of its
// own (no tools, no title, no name), not the default's stand-in.
var emptyOK = map[string]bool{"tools": true, "allowed-tools": true, "title": true, "name": true}

// emptyValues refuses a text flag of fs given an empty value (--from "",
// --model "", --write ""), as any flag set to a value it cannot take: it
// would silently be the default, or nothing. The flags of their own types
// (durations, counts, --host) judge an empty value themselves. run checks
// the flags before the positional arguments, positional those after.
func emptyValues(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil || emptyOK[f.Name] {
			return
		}
		if s, ok := g.Get().(string); ok && s == "" {
			err = &flagError{fmt.Sprintf("--%s: an empty value (leave the flag out for its default)", f.Name)}
		}
	})
	return err
}

// stdoutWriter is the verbs' stdout. It keeps the first write error and
// fails every write after it, so a verb that prints as it goes (watch)
// stops at the first line lost.
type stdoutWriter struct {
	w     io.Writer
	err   error
	noted bool // the verb said what the lost output means (verdictUnprinted)
}

func (o *stdoutWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

// verdictUnprinted is called by a verb whose exit code is its verdict's
// (send, resume, start) once it has printed the verdict: if stdout lost a
// write, it says so on stderr and the exit code stays the verdict's. A
// delivered line is not reported refused (exit 1) because its row could
// not be printed; the receipt row (msgID's, when there is one, on the
// station dest, "" for this one) keeps it.
func (e *env) verdictUnprinted(msgID, dest string) {
	if e.out.err == nil || e.out.noted {
		return
	}
	e.out.noted = true
	hint := ""
	if msgID != "" {
		hint = "; oo-claude receipt " + msgID + " prints its row"
		if dest != "" {
			hint = "; oo-claude receipt " + msgID + " --host " + dest + " prints its row"
		}
	}
	fmt.Fprintf(e.stderr, "oo-claude: the verdict was not printed in full (%v); the exit code is still its class's%s\n", e.out.err, hint)
}

// help prints the usage of the verb args name (the verbs without args) on
// stdout.
func help(e *env, root *ffcli.Command, args []string) error {
	if len(args) == 1 {
		switch args[0] {
		case "help", "-h", "-help", "--help":
			args = nil // help's own help: the verbs
		}
	}
	c, path := selectedCmd(root, args)
	switch {
	case len(path) < len(args) && len(path) > 0 && len(c.Subcommands) > 0:
		return usagef("help %s: no %q among its verbs", strings.Join(path, " "), args[len(path)])
	case len(path) > 0 && len(path) < len(args):
		return usagef("help takes one verb: %q is extra", strings.Join(args[len(path):], " "))
	case len(path) < len(args):
		return usagef("unknown verb %q (oo-claude help lists them)", args[0])
	}
	_, err := fmt.Fprint(e.stdout, usageOf(root, c))
	return err
}

// quiet silences the flag sets of c and its subcommands.
func quiet(c *ffcli.Command) {
	if c.FlagSet != nil {
		c.FlagSet.SetOutput(io.Discard)
	}
	for _, s := range c.Subcommands {
		quiet(s)
	}
}

// printJSONLine is every verb's --json form: v as one line of JSON on
// stdout, the exact text (not escaped as human output is), written in one
// write; an encoding or a write that fails is its error.
func printJSONLine(e *env, v any) error {
	b, err := encodeJSON(v, false)
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(b)
	return err
}

// encodeJSON is the CLI's one JSON encoding: v with a final newline, on
// one line, or indented for a file a person reads (sessions --write).
func encodeJSON(v any, indent bool) ([]byte, error) {
	var b []byte
	var err error
	switch r, ok := v.(receipt.SendRow); {
	case indent:
		b, err = json.MarshalIndent(v, "", "  ")
	case ok:
		// A send row writes itself, compact (every send prints one):
		// json.Marshal would only check and copy its bytes.
		b, err = r.MarshalJSON()
	default:
		b, err = json.Marshal(v)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
