// Command fakemodel serves package fakemodel's fake Anthropic Messages API
// on 127.0.0.1 until it is stopped (SIGINT or SIGTERM, Ctrl-C), so that a
// person can try a real Claude Code offline, without an API key:
//
//	go run ./fakes/fakemodel/cmd/fakemodel -reply "hello from the fake model" -config /tmp/cc-offline
//
// Once it serves, it prints to stdout the environment a client needs, as
// shell export lines (ANTHROPIC_BASE_URL with the server's URL,
// ANTHROPIC_API_KEY, and with -config CLAUDE_CONFIG_DIR), and logs each
// request to stderr. Every conversation request gets the -reply text; the
// requests Claude Code sends besides the conversation (titles, summaries)
// get "ok". With -config DIR it first writes DIR/.claude.json (made 0700,
// the file 0600) so an interactive claude starts without a dialog: the
// onboarding done, the printed key approved and the -trust directory (the
// current one by default) trusted. It exits 0 when stopped, 2 on a bad flag
// and 1 when the config cannot be written.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// apiKey is the key the printed environment names and -config approves.
const apiKey = "sk-ant-offline"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run serves until ctx ends and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakemodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	reply := fs.String("reply", "ok", "the text every conversation request gets")
	config := fs.String("config", "", "write `DIR`/.claude.json for an interactive claude and print CLAUDE_CONFIG_DIR")
	trust := fs.String("trust", "", "the project `DIR` -config trusts (default: the current directory)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakemodel: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *config != "" {
		dir, err := writeConfig(*config, *trust)
		if err != nil {
			fmt.Fprintf(stderr, "fakemodel: %v\n", err)
			return 1
		}
		*config = dir
	}
	srv := fakemodel.NewServer(fakemodel.Options{DefaultReply: fakemodel.Text(*reply), Logf: func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }})
	defer srv.Close()
	env := [][2]string{{"ANTHROPIC_BASE_URL", srv.URL}, {"ANTHROPIC_API_KEY", apiKey}}
	if *config != "" {
		env = append(env, [2]string{"CLAUDE_CONFIG_DIR", *config})
	}
	for _, kv := range env {
		fmt.Fprintf(stdout, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
	fmt.Fprintf(stderr, "fakemodel: serving %s until interrupted\n", srv.URL)
	<-ctx.Done()
	fmt.Fprintf(stderr, "fakemodel: stopped after %d requests\n", srv.Len())
	return 0
}

// writeConfig writes <dir>/.claude.json for an interactive claude that
// must start without a dialog, and returns dir made absolute.
func writeConfig(dir, trust string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if trust == "" {
		if trust, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	if trust, err = filepath.Abs(trust); err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(trust); err == nil {
		trust = real // Claude Code keys its projects by the real path
	}
	b, err := json.MarshalIndent(map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"customApiKeyResponses":  map[string]any{"approved": []string{apiKey}, "rejected": []string{}},
		"projects":               map[string]any{trust: map[string]any{"hasTrustDialogAccepted": true}},
	}, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, ".claude.json"), append(b, '\n'), 0o600)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
