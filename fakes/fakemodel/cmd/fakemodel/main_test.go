package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// readmeRecipe returns the arguments of the README's command that runs
// this program (`go run ./fakes/fakemodel/cmd/fakemodel …`), so the recipe
// a person copies is the one this test runs.
func readmeRecipe(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^    go run \./fakes/fakemodel/cmd/fakemodel (.*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the README has no `go run ./fakes/fakemodel/cmd/fakemodel …` command")
	}
	// Plain words and double-quoted strings, as the README writes them.
	var args []string
	for _, w := range regexp.MustCompile(`"[^"]*"|\S+`).FindAllString(string(m[1]), -1) {
		args = append(args, strings.Trim(w, `"`))
	}
	return args
}

// TestServesUntilStopped runs the README's recipe: the program prints the
// environment a client needs once it serves, answers a conversation
// request with the -reply text, writes the -config directory's
// .claude.json, and exits 0 when it is stopped.
func TestServesUntilStopped(t *testing.T) {
	args := readmeRecipe(t)
	dir := t.TempDir()
	for i, a := range args {
		if i > 0 && args[i-1] == "-config" {
			args[i] = filepath.Join(dir, a) // inside the test's directory
		}
	}
	args = append(args, "-trust", dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	code := make(chan int, 1)
	go func() {
		defer outW.Close()
		code <- run(ctx, args, outW, io.Discard)
	}()
	env := map[string]string{}
	sc := bufio.NewScanner(outR)
	for len(env) < 3 && sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if !ok {
			t.Fatalf("not an export line: %q", sc.Text())
		}
		env[k] = strings.Trim(v, "'")
	}
	go io.Copy(io.Discard, outR)
	url := env["ANTHROPIC_BASE_URL"]
	if !strings.HasPrefix(url, "http://127.0.0.1:") || env["ANTHROPIC_API_KEY"] != apiKey || env["CLAUDE_CONFIG_DIR"] == "" {
		t.Fatalf("printed environment %v", env)
	}
	body := `{"model":"claude-haiku-5-5","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`
	c := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	defer c.CloseIdleConnections()
	resp, err := c.Post(url+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var want string
	for i, a := range args {
		if i > 0 && args[i-1] == "-reply" {
			want = a
		}
	}
	if resp.StatusCode != 200 || want == "" || !strings.Contains(string(b), want) {
		t.Errorf("POST /v1/messages: %d %s; want the reply %q", resp.StatusCode, b, want)
	}
	cfg, err := os.ReadFile(filepath.Join(env["CLAUDE_CONFIG_DIR"], ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Onboarded bool `json:"hasCompletedOnboarding"`
		Keys      struct {
			Approved []string `json:"approved"`
		} `json:"customApiKeyResponses"`
		Projects map[string]struct {
			Trusted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(cfg, &got); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if !got.Onboarded || len(got.Keys.Approved) != 1 || got.Keys.Approved[0] != apiKey || !got.Projects[real].Trusted {
		t.Errorf(".claude.json: %s", cfg)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("stopped: exit %d, want 0", c)
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not return after its context ended")
	}
}

// TestBadFlag: a flag it does not have is exit 2, before anything serves.
func TestBadFlag(t *testing.T) {
	var stdout strings.Builder
	if c := run(context.Background(), []string{"-nope"}, &stdout, io.Discard); c != 2 || stdout.Len() != 0 {
		t.Errorf("run -nope = %d, stdout %q; want 2 and nothing", c, stdout.String())
	}
}
