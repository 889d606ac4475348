package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/internal/doormancmd"
	"github.com/oo-family/oo-claude/internal/programs"
	"github.com/oo-family/oo-claude/internal/topcmd"
	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"
)

// TestMain doubles as the oo-claude binary: when OO_CLAUDE_TEST_AS_BINARY is
// set, the test binary runs main instead of the tests, so tests can run the
// real program as a child process (exit codes, stdio, signals) without
// `go build` or `go run`.
func TestMain(m *testing.M) {
	fakeclaude.Main() // the test binary also plays claude and systemd-run
	// It also plays the doorman program, which a run as oo-claude execs
	// (testDoormanProc) under that name, and which testscript installs
	// beside "oo-claude" on the scripts' PATH.
	// And the top program, execed the same way.
	switch filepath.Base(os.Args[0]) {
	case programs.Doorman:
		doormanMain()
	case programs.Top:
		topMain()
	}
	// A detached start's supervisor is this binary run as "start
	// --foreground-unit <result file>" (start --detach), with the caller's
	// environment, which has no switch.
	if os.Getenv("OO_CLAUDE_TEST_AS_BINARY") == "1" || len(os.Args) > 2 && os.Args[1] == "start" && os.Args[2] == "--foreground-unit" {
		os.Unsetenv("OO_CLAUDE_TEST_AS_BINARY")
		if f := os.Getenv(costFileEnv); f != "" {
			os.Exit(mainCounted(f))
		}
		// Run from the build's directory, the binary has no doorman
		// program beside it; a copy named oo-claude is the real thing.
		p := osProc()
		if exe, _ := os.Executable(); filepath.Base(exe) != "oo-claude" {
			p = testProgramProc(p)
		}
		os.Exit(mainWith(p))
	}
	// The testscript files (testdata/script) run the binary as
	// "oo-claude" on their PATH: testscript copies this test binary there.
	testscript.Main(leakChecked{m}, map[string]func(){"oo-claude": main, programs.Doorman: doormanMain, programs.Top: topMain})
}

// doormanMain is cli/oo-claude-doorman's main.
func doormanMain() {
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	os.Exit(doormancmd.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// topMain is cli/oo-claude-top's main. The read verb the view runs is
// this binary again, as oo-claude.
func topMain() {
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	os.Exit(topcmd.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, append(os.Environ(), "OO_CLAUDE_TEST_AS_BINARY=1")))
}

// testProgramProc is p for this test binary run as oo-claude: its doorman
// and top verbs exec this binary again, as the program (argv[0] named so,
// beside it), the way execProgram execs the program beside oo-claude.
func testProgramProc(p proc) proc {
	p.program = func(_ context.Context, name string, argv []string, _ io.Reader, _, _ io.Writer) error {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		return syscall.Exec(exe, append([]string{filepath.Join(filepath.Dir(exe), name)}, argv...), os.Environ())
	}
	p.lookProgram = playsEveryProgram
	return p
}

// playsEveryProgram is the program lookup of this test binary run as
// oo-claude: it plays every program itself.
func playsEveryProgram(string) (string, error) { return os.Executable() }

// leakChecked runs the tests, then fails the run when goroutines leaked
// (what goleak.VerifyTestMain does, inside testscript.Main).
type leakChecked struct{ m *testing.M }

func (l leakChecked) Run() int {
	widenParallel()
	code := l.m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			return 1
		}
	}
	return code
}

// widenParallel runs up to 4 parallel tests per CPU unless -parallel is
// given. The tests mostly wait (on the child processes they run, the
// doorman's settle, a --seen or --wait window), not compute: at the
// default of one per CPU the package took four times as long on 2 cores.
// The two tests that hold a run to a tight wall-clock bound stay serial,
// so they run alone (TestDoormanSIGINT, TestSendInProcess).
func widenParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// result is what one run of the binary did.
type result struct {
	stdout, stderr string
	code           int
}

// binary is the path of this test binary, which runs as oo-claude under
// OO_CLAUDE_TEST_AS_BINARY=1.
func binary(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// command returns an *exec.Cmd that runs oo-claude with args and exactly the
// environment env (plus the switch that makes the test binary oo-claude,
// and childGORACE).
func command(ctx context.Context, t testing.TB, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Env = append([]string{"OO_CLAUDE_TEST_AS_BINARY=1", "PATH=/usr/bin:/bin", childGORACE()}, env...)
	return cmd
}

// childGORACE is the race detector's options for a child run of the
// binary: the test's own (GORACE), with atexit_sleep_ms=0. The race
// runtime otherwise sleeps a second before every exit (its default), which
// made each run of a -race binary take over a second even on an idle
// machine and ate into every wall-clock bound that spans a child's exit.
// Without -race the variable is ignored.
func childGORACE() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

// runBinary runs oo-claude as a child process and returns its output and
// exit code. stdin is empty unless given.
func runBinary(t testing.TB, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(ctx, t, env, args...)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(t, cmd)
}

// runAt runs the program at path with args and exactly env, stdin empty.
// A start that fails with ETXTBSY (a file just written, whose descriptor a
// child another test forked meanwhile still holds until its exec) is tried
// again until that child has let go; 60 s bound it all.
func runAt(t testing.TB, path string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Start()
		if errors.Is(err, syscall.ETXTBSY) {
			select { // no event says the other child exec'd: look again shortly
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
				continue
			}
		}
		if err != nil {
			t.Fatalf("run %v: %v", cmd.Args, err)
		}
		return waitCmd(t, cmd, &out, &errb)
	}
}

// runCmd runs cmd and returns its output and exit code.
func runCmd(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return waitCmd(t, cmd, &out, &errb)
}

// waitCmd waits for a started cmd whose stdout and stderr are out and
// errb, and returns its output and exit code.
func waitCmd(t testing.TB, cmd *exec.Cmd, out, errb *bytes.Buffer) result {
	t.Helper()
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// runInProcess calls run directly (faster; for tests that need no process
// boundary) and returns the exit code main would use.
func runInProcess(t testing.TB, getenv func(string) string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, testProc(getenv))
	code := exitCode(err, &errb)
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// testProc is the process seen by an in-process run: the test's own
// environment lookup, the rest the test process's.
func testProc(getenv func(string) string) proc {
	p := osProc()
	p.getenv = getenv
	p.program = func(ctx context.Context, name string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
		if name == programs.Top {
			return exitWith(topcmd.Main(ctx, argv, stdin, stdout, stderr, getenv, os.Environ()))
		}
		return exitWith(doormancmd.Main(ctx, argv, stdin, stdout, stderr, getenv))
	}
	p.lookProgram = playsEveryProgram
	return p
}

func TestUsageAndVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{"no verb", nil, 2, "", "VERBS"},
		{"unknown verb", []string{"bogus"}, 2, "", `unknown verb "bogus"`},
		{"-h", []string{"-h"}, 0, "VERBS", ""},
		{"version", []string{"version"}, 0, "oo-claude ", ""},
		{"version json", []string{"version", "--json"}, 0, `"name":"oo-claude"`, ""},
		{"version bad flag", []string{"version", "--nope"}, 2, "", "flag provided but not defined"},
		{"version extra arg", []string{"version", "x"}, 2, "", "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runBinary(t, []string{"HOME=" + t.TempDir()}, "", tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.inStdout) {
				t.Errorf("stdout %q does not contain %q", r.stdout, tt.inStdout)
			}
			if !strings.Contains(r.stderr, tt.inStderr) {
				t.Errorf("stderr %q does not contain %q", r.stderr, tt.inStderr)
			}
		})
	}
}

// TestVerbsFor: each verb's name is its command's; a run of a verb
// builds that verb alone (case-blind, as the parse matches), and the
// usage, help, a flag and an unknown verb build every one, in order.
func TestVerbsFor(t *testing.T) {
	e := newEnv(nil, io.Discard, io.Discard, osProc())
	var all []string
	for _, v := range verbs {
		if got := v.make(e).Name; got != v.name {
			t.Errorf("verb %q builds the command %q", v.name, got)
		}
		all = append(all, v.name)
		for _, arg := range []string{v.name, strings.ToUpper(v.name)} {
			if got := verbsFor([]string{arg, "x"}); len(got) != 1 || got[0].name != v.name {
				t.Errorf("verbsFor(%q) builds %d verbs; want %s alone", arg, len(got), v.name)
			}
		}
	}
	for _, args := range [][]string{nil, {"help", "send"}, {"-h"}, {"nosuchverb"}, {""}} {
		var got []string
		for _, v := range verbsFor(args) {
			got = append(got, v.name)
		}
		if strings.Join(got, " ") != strings.Join(all, " ") {
			t.Errorf("verbsFor(%q) = %v; want every verb %v", args, got, all)
		}
	}
}

// TestHandlesSignals: every verb that waits or writes installs the
// signal handler (a SIGINT must end it with its verdict); version, help
// and the usage print only, and skip it.
func TestHandlesSignals(t *testing.T) {
	for _, v := range verbs {
		name := v.name
		want := name != "version"
		if got := handlesSignals([]string{name, "x"}); got != want {
			t.Errorf("handlesSignals(%s) = %v; want %v", name, got, want)
		}
	}
	for _, args := range [][]string{nil, {"help"}, {"help", "send"}, {"-h"}, {"--help"}} {
		if handlesSignals(args) {
			t.Errorf("handlesSignals(%q) = true; want false", args)
		}
	}
	if !handlesSignals([]string{"nosuchverb"}) {
		t.Error("handlesSignals of an unknown verb = false; want true (its usage error changes nothing, and a verb added later is covered)")
	}
}
