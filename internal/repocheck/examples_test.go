package repocheck

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakesession"
)

// TestExamplesOutsideTheModule copies each directory of examples/ into a
// fresh module of its own, as a user copies a recipe into a project, with
// a replace directive pointing at this checkout; `go mod tidy` fills its
// requirements and `go vet` builds it and its tests. The examples that need
// nothing outside run: roundtrip prints its steps, dispatcher's test passes,
// and send, ask and watch do what they say against a fake session.
func TestExamplesOutsideTheModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module per example")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := goDirective(t, filepath.Join(root, "go.mod"))
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	bins, binDir := map[string]string{}, t.TempDir()
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			dir := copyExample(t, filepath.Join(root, "examples", name))
			mod := "module example.com/" + name + "\n\ngo " + goVersion + "\n\n" +
				"require github.com/oo-family/oo-claude v0.0.0\n\n" +
				"replace github.com/oo-family/oo-claude => " + root + "\n"
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o600); err != nil {
				t.Fatal(err)
			}
			goCmd(t, dir, "mod", "tidy")
			goCmd(t, dir, "vet", "./...")
			if _, err := os.Stat(filepath.Join(dir, "main.go")); err == nil {
				bin := filepath.Join(binDir, name)
				goCmd(t, dir, "build", "-o", bin, ".")
				bins[name] = bin
			}
			if name == "dispatcher" || name == "glue" {
				goCmd(t, dir, "test", "-count=1", "./...")
			}
		})
	}
	// The recipes stay short enough to copy whole; roundtrip and offline
	// are the README's demos, whole programs, and glue is a test of the
	// glue rows, each row short on its own (checkGlue).
	for _, recipe := range []string{"ask", "dispatcher", "send", "watch"} {
		files, _ := filepath.Glob(filepath.Join(root, "examples", recipe, "*.go"))
		if len(files) == 0 {
			t.Errorf("examples/%s: no recipe there", recipe)
		}
		for _, f := range files {
			if b, err := os.ReadFile(f); err != nil || bytes.Count(b, []byte("\n")) > maxRecipeLines {
				t.Errorf("%s: %d lines (%v), want at most %d", f, bytes.Count(b, []byte("\n")), err, maxRecipeLines)
			}
		}
	}
	checkGlue(t, filepath.Join(root, "examples", "glue"))
	if t.Failed() {
		return
	}

	t.Run("run/roundtrip", func(t *testing.T) {
		out := run(t, exec.Command(bins["roundtrip"]), 0)
		for _, want := range []string{"delivered-steer", "delivered-start", "heartbeat stopped", "\nok "} {
			if !strings.Contains(out, want) {
				t.Errorf("roundtrip's output lacks %q:\n%s", want, out)
			}
		}
	})
	s := fakesession.Start(t, fakesession.Options{Name: "builder", Answer: func(line string) fakesession.Turn {
		return fakesession.Turn{Tools: []string{"Bash"}, Text: "green: 412 tests passed"}
	}})
	env := append(os.Environ(), s.Station.Env()...)
	t.Run("run/watch+send+ask", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		watch := exec.CommandContext(ctx, bins["watch"])
		watch.Env = env
		watch.Cancel = func() error { return watch.Process.Signal(os.Interrupt) }
		pipe, err := watch.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := watch.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(pipe)
		waitLine := func(event string) {
			t.Helper()
			for lines.Scan() {
				if f := strings.Fields(lines.Text()); len(f) > 2 && f[1] == event && strings.HasPrefix(s.SessionID(), f[2]) {
					return
				}
			}
			t.Fatalf("watch ended before a %s event of the session", event)
		}
		waitLine("session-started")

		send := exec.Command(bins["send"], "builder", "please also run the linter")
		send.Env = env
		if out := run(t, send, 0); !strings.HasPrefix(out, "delivered to "+s.SessionID()) {
			t.Errorf("send printed %q, want delivered to the session", out)
		}
		waitLine("line-delivered")
		ask := exec.Command(bins["ask"], "builder", "what is the build status?")
		ask.Env = env
		if out := run(t, ask, 0); out != "green: 412 tests passed\n" {
			t.Errorf("ask printed %q, want the session's answer", out)
		}
		send = exec.Command(bins["send"], "nobody-at-all", "hi")
		send.Env = env
		if out := run(t, send, 1); !strings.Contains(out, `no session is called "nobody-at-all"`) {
			t.Errorf("send to an unknown session printed %q", out)
		}

		watch.Process.Signal(os.Interrupt)
		for lines.Scan() {
		}
		if err := watch.Wait(); err != nil {
			t.Errorf("watch after SIGINT: %v", err)
		}
	})
}

// maxRecipeLines is the most lines of a recipe's file.
const maxRecipeLines = 60

// glueRows are the glue rows examples/glue shows, each between the marker
// comments "// glue(x) {" and "// }"; maxGlueLines is the most lines of
// code a row takes between its markers.
const (
	glueRows     = "abcdef"
	maxGlueLines = 3
)

// checkGlue checks that the .go files of dir show every glue row once, in
// at most maxGlueLines non-blank lines each.
func checkGlue(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	rows := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		row, start, lines := "", 0, 0
		for i, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			switch {
			case row == "" && strings.HasPrefix(l, "// glue(") && strings.HasSuffix(l, ") {"):
				row, start, lines = strings.TrimSuffix(strings.TrimPrefix(l, "// glue("), ") {"), i+1, 0
				rows[row]++
			case row != "" && l == "// }":
				if lines > maxGlueLines {
					t.Errorf("%s:%d: glue(%s) takes %d lines, want at most %d", f, start, row, lines, maxGlueLines)
				}
				row = ""
			case row != "" && l != "":
				lines++
			}
		}
		if row != "" {
			t.Errorf("%s:%d: glue(%s) has no closing // }", f, start, row)
		}
	}
	for _, r := range glueRows {
		if rows[string(r)] != 1 {
			t.Errorf("examples/glue shows glue(%c) %d times, want once", r, rows[string(r)])
		}
	}
	for r := range rows {
		if len(r) != 1 || !strings.Contains(glueRows, r) {
			t.Errorf("examples/glue shows glue(%s), a row not among %s", r, glueRows)
		}
	}
}

// goDirective is the go line of the go.mod at path.
func goDirective(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s has no go directive", path)
	return ""
}

// copyExample copies the .go files of src into a new directory.
func copyExample(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples/%s: no Go files (%v)", filepath.Base(src), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// goCmd runs the go command in dir, outside any workspace; requirements
// are resolved through the module cache and, when it lacks one, the
// proxy.
func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// run runs cmd and returns its stdout, failing unless it exits with code.
func run(t *testing.T, cmd *exec.Cmd, code int) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	if got := cmd.ProcessState.ExitCode(); got != code {
		t.Fatalf("%s exited %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", filepath.Base(cmd.Path), got, err, code, stdout.String(), stderr.String())
	}
	return stdout.String()
}
