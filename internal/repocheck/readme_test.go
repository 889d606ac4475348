package repocheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// readmeBlocks returns the code blocks of the README section whose heading
// is heading (a "## " line), in order: indented blocks (four spaces) as
// their lines, fenced blocks with their info string (```text) as fence.
type readmeBlock struct {
	fence string   // "" for an indented block; else the info string
	lines []string // without the indentation
	line  int      // README line of the block's first line
}

func readmeSection(t *testing.T, heading string) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	in, found := false, false
	var blocks []readmeBlock
	var cur *readmeBlock
	prevBlank := true
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			in = l == "## "+heading
			found = found || in
			continue
		}
		if !in {
			continue
		}
		if f, ok := strings.CutPrefix(l, "```"); ok {
			blk := readmeBlock{fence: f, line: i + 2}
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				blk.lines = append(blk.lines, lines[i])
			}
			blocks = append(blocks, blk)
			cur, prevBlank = nil, false
			continue
		}
		if code, ok := strings.CutPrefix(l, "    "); ok && (cur != nil || prevBlank) {
			if cur == nil {
				blocks = append(blocks, readmeBlock{line: i + 1})
				cur = &blocks[len(blocks)-1]
			}
			cur.lines = append(cur.lines, code)
			continue
		}
		cur, prevBlank = nil, strings.TrimSpace(l) == ""
	}
	if !found {
		t.Fatalf("README.md has no section %q", heading)
	}
	return blocks
}

// TestReadmeSetUp runs every command of the README's "Set up" section
// (each indented block's lines, in order, as one bash script with errexit)
// as a newcomer would: in the module root, in a fresh HOME and GOPATH, with
// no claude on PATH; the pinned Claude Code is reached only through
// scripts/install-claude-code.sh (its cache is the one the suite uses, so
// nothing is downloaded). `scripts/test.sh` itself is left out: it is the
// command that runs this test. Fenced blocks are sample output and must be
// marked text; the sample of examples/offline must show the step lines
// the program prints, in its order, each of the same shape (stepShape:
// the same words, with timings, ids and counts left free).
func TestReadmeSetUp(t *testing.T) {
	blocks := readmeSection(t, "Set up")
	var script []string
	var samples []readmeBlock
	for _, b := range blocks {
		if b.fence != "" {
			if b.fence != "text" {
				t.Errorf("README.md:%d: a fenced block in Set up is sample output, marked ```text; got ```%s", b.line, b.fence)
			}
			samples = append(samples, b)
			continue
		}
		for _, l := range b.lines {
			if strings.TrimSpace(l) == "scripts/test.sh" {
				continue
			}
			script = append(script, l)
		}
	}
	for _, want := range []string{"go run ./examples/roundtrip", "go run ./examples/offline", "scripts/install-claude-code.sh", "go install ./cli/...", "oo-claude doctor"} {
		if !strings.Contains(strings.Join(script, "\n"), want) {
			t.Errorf("the Set up commands lack %q", want)
		}
	}
	pinned := os.Getenv("OO_CLAUDE_E2E_CLAUDE")
	if pinned == "" {
		t.Skip("set OO_CLAUDE_E2E_CLAUDE to run the README's commands: run scripts/test.sh or export OO_CLAUDE_E2E_CLAUDE=$(scripts/install-claude-code.sh)")
	}
	// <cache>/<version>/node_modules/@anthropic-ai/claude-code-<platform>/claude
	cache := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(pinned)))))
	if filepath.Base(filepath.Dir(filepath.Dir(pinned))) != "@anthropic-ai" {
		t.Skipf("OO_CLAUDE_E2E_CLAUDE=%s is not an install of scripts/install-claude-code.sh; the README's commands need one", pinned)
	}
	root := moduleRoot(t)
	tmp := t.TempDir()
	home, gopath := filepath.Join(tmp, "home"), filepath.Join(tmp, "gopath")
	for _, d := range []string{home, gopath} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	goBin := filepath.Dir(goTool(t))
	env := []string{
		"HOME=" + home, "GOPATH=" + gopath, "USER=" + os.Getenv("USER"), "LANG=C.UTF-8",
		"PATH=" + goBin + ":/usr/local/bin:/usr/bin:/bin",
		"OO_CLAUDE_E2E_CACHE=" + cache,
		// The build and module caches are the suite's: nothing is built
		// twice or downloaded.
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"),
		// claude mcp talks to nobody but the doorman it starts.
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "GOFLAGS" || k == "GOPROXY" || k == "GONOSUMDB" || k == "GOTOOLCHAIN" || k == "TMPDIR" {
			env = append(env, kv)
		}
	}
	if p, err := exec.LookPath("claude"); err == nil && strings.HasPrefix(p, "/usr") {
		t.Logf("note: %s is on the PATH the README's commands run with", p)
	}
	body := "set -euo pipefail\ntrap 'echo \"README command failed: $BASH_COMMAND\" >&2' ERR\n" + strings.Join(script, "\n") + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", body)
	cmd.Dir, cmd.Env = root, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's Set up commands failed: %v\nscript:\n%s\noutput:\n%s", err, body, out.String())
	}
	got := out.String()
	for _, want := range []string{"every line was carried by the session's own child", "claude-inbox: " + gopath + "/bin/oo-claude doorman --mcp - ✔ Connected", "  reply    \"", "Removed MCP server"} {
		if !strings.Contains(got, want) {
			t.Errorf("the commands' output lacks %q:\n%s", want, got)
		}
	}
	// The sample of the offline example: the same step lines in the same
	// order, each of the same shape (its words; timings, ids, pids, counts
	// and the temporary directory aside).
	steps := regexp.MustCompile(`(?m)^ +[0-9.]+s  [a-z]+ .*$`)
	var sample []string
	for _, s := range samples {
		for _, l := range steps.FindAllString(strings.Join(s.lines, "\n"), -1) {
			sample = append(sample, stepShape(l))
		}
	}
	var ran []string
	for _, l := range steps.FindAllString(got, -1) {
		ran = append(ran, stepShape(l))
	}
	if d := cmp.Diff(sample, ran); d != "" {
		t.Errorf("the README's sample of examples/offline is not what the program printed, in shape (-README +ran):\n%s", d)
	}
}

// stepShape is a step line of examples/offline with what differs from
// run to run written as placeholders: the temporary directory, UUIDs,
// durations and other numbers.
func stepShape(l string) string {
	for _, r := range []struct{ re, with string }{
		{`\S*/oo-offline-[0-9]+`, "<dir>"},
		// Both classes mean delivered, and which one a line gets depends on
		// the session's status at that moment: a -p session's row can read
		// idle before its first turn, so the steer may be delivered-start.
		{`\bdelivered-(steer|start)\b`, "delivered-<class>"},
		{`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`, "<uuid>"},
		{`[0-9]+(\.[0-9]+)?s\b`, "<s>"},
		{`\b[0-9]+\b`, "<n>"},
	} {
		l = regexp.MustCompile(r.re).ReplaceAllString(l, r.with)
	}
	return strings.TrimSpace(l)
}

// goTool is the go command the suite runs under: the one on PATH, as
// scripts/test.sh and a user's shell find it.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	return p
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command(goTool(t), "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// TestReadmeGo compiles every ```go block of the README as the body of a
// function `func(ctx context.Context) error` in a package of this module
// (through go build -overlay, so nothing is written into the tree), with
// the imports its identifiers name, so a renamed function, field or type
// breaks the test instead of the reader's copy.
func TestReadmeGo(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var snippets []string
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```go" {
			continue
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		snippets = append(snippets, strings.Join(body, "\n"))
	}
	if len(snippets) == 0 {
		t.Skip("the README has no ```go block")
	}
	pkgs := map[string]string{"context": "context", "os": "os", "time": "time", "fmt": "fmt", "errors": "errors"}
	for _, p := range []string{"station", "claudeinbox", "transcript", "headless", "doorman", "door", "lineage", "receipt", "doctor", "observatory"} {
		pkgs[p] = "github.com/oo-family/oo-claude/" + p
	}
	root := moduleRoot(t)
	tmp := t.TempDir()
	overlay := map[string]string{}
	declared := regexp.MustCompile(`(?m)^(\w+(?:, *\w+)*) :=`)
	for i, s := range snippets {
		imports := map[string]bool{"context": true}
		for name := range pkgs {
			if regexp.MustCompile(`\b` + name + `\.`).MatchString(s) {
				imports[name] = true
			}
		}
		var src strings.Builder
		fmt.Fprintf(&src, "package readmego\n\nimport (\n")
		for name := range imports {
			fmt.Fprintf(&src, "\t%q\n", pkgs[name])
		}
		fmt.Fprintf(&src, ")\n\nfunc snippet%d(ctx context.Context) error {\n%s\n", i, s)
		used := map[string]bool{"_": true}
		for _, m := range declared.FindAllStringSubmatch(s, -1) {
			for _, v := range strings.Split(m[1], ",") {
				if v = strings.TrimSpace(v); !used[v] {
					used[v] = true
					fmt.Fprintf(&src, "\t_ = %s\n", v)
				}
			}
		}
		fmt.Fprintf(&src, "\treturn nil\n}\n")
		file := filepath.Join(tmp, fmt.Sprintf("snippet%d.go", i))
		if err := os.WriteFile(file, []byte(src.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(root, "internal", "repocheck", "readmego", filepath.Base(file))] = file
	}
	ov, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool(t), "build", "-overlay", ovFile, "./internal/repocheck/readmego")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("a ```go block of the README does not compile: %v\n%s", err, out)
	}
}

// readmeMaxLines is the README's length bound: what it is, set-up, verbs
// with examples, the library, knobs, exit codes and known gaps; the
// internals (the doorman protocol, every verb's rules in full, the station
// files it trusts) are docs/INTERNALS.md's, which the README links.
const readmeMaxLines = 500

// TestReadmeLength: the README stays a newcomer's page, at most
// readmeMaxLines lines, and links the document the internals moved to.
func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move internals to docs/INTERNALS.md", n, readmeMaxLines)
	}
	if !strings.Contains(string(b), "](docs/INTERNALS.md") {
		t.Errorf("README.md does not link docs/INTERNALS.md")
	}
}

// TestStepShape: what differs between runs is left free, the words are not.
func TestStepShape(t *testing.T) {
	a := `   0.8s  steer    delivered-steer msg_id=244d2736-2539-4b1f-9c22-a806ccf13014, acked after 0.25s: "[steerer 📡] please also run the linter"`
	b := `  12.1s  steer    delivered-steer msg_id=90d26019-dd00-4015-8522-8728abda09f5, acked after 1.5s: "[steerer 📡] please also run the linter"`
	// The same steer delivered while the session still read idle.
	start := `   0.9s  steer    delivered-start msg_id=90d26019-dd00-4015-8522-8728abda09f5, acked after 0.1s: "[steerer 📡] please also run the linter"`
	for _, other := range []string{b, start} {
		if stepShape(a) != stepShape(other) {
			t.Errorf("two runs' steer lines differ in shape:\n%s\n%s", stepShape(a), stepShape(other))
		}
	}
	for _, c := range []string{
		`   0.8s  steer    delivered-steer msg_id=244d2736-2539-4b1f-9c22-a806ccf13014, acked after the settle: "[steerer 📡] please also run the linter"`,
		`   0.8s  steer    queued-no-doorman msg_id=244d2736-2539-4b1f-9c22-a806ccf13014, acked after 0.25s: "[steerer 📡] please also run the linter"`,
	} {
		if stepShape(a) == stepShape(c) {
			t.Errorf("lines of other words have one shape:\n%s\n%s", a, c)
		}
	}
	if got, want := stepShape(`   7.2s  cleanup  claude and its doorman exited; removing /tmp/oo-offline-3659868900`), "<s>  cleanup  claude and its doorman exited; removing <dir>"; got != want {
		t.Errorf("stepShape = %q, want %q", got, want)
	}
}
