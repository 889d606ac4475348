package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mcpSamplesEnv asks TestMCPStartCost for that many samples per binary;
// mcpBaseEnv names a second oo-claude binary to measure side by side
// (scripts/bench.sh mcp builds one from a git revision).
const (
	mcpSamplesEnv = "OO_CLAUDE_E2E_MCP_SAMPLES"
	mcpBaseEnv    = "OO_CLAUDE_E2E_MCP_BASE"
)

// TestMCPStartCost measures `oo-claude doorman --mcp` from the process's
// start to its answer to initialize, and its resident memory (VmRSS) then
// and after a tools/call, the median of the samples, binaries interleaved.
// It runs only when OO_CLAUDE_E2E_MCP_SAMPLES is set.
func TestMCPStartCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(mcpSamplesEnv))
	if n <= 0 {
		t.Skipf("set %s to measure", mcpSamplesEnv)
	}
	bins := [][2]string{{"this tree", ooClaude(t)}}
	if b := os.Getenv(mcpBaseEnv); b != "" {
		bins = append([][2]string{{"base", b}}, bins...)
	}
	type sample struct {
		start         time.Duration
		rssKB, callKB int
	}
	results := make([][]sample, len(bins))
	root := t.TempDir()
	env := append(os.Environ(),
		"HOME="+root, "CLAUDE_CONFIG_DIR="+filepath.Join(root, "cfg"),
		"OO_CLAUDE_INBOX_DIR="+filepath.Join(root, "inbox"),
		"OO_CLAUDE_STATE_DIR="+filepath.Join(root, "state"),
		"OO_CLAUDE_OBSERVATORY_DIR="+filepath.Join(root, "obs"))
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.332"}}}` + "\n"
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":{}}}` + "\n"
	for i := range n + 2 { // two warm-ups
		for b, bin := range bins {
			cmd := exec.Command(bin[1], "doorman", "--mcp")
			cmd.Env = env
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			outp, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			out := bufio.NewReader(outp)
			io.WriteString(in, initialize) // buffered by the pipe until read
			t0 := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			l, err := out.ReadString('\n')
			took := time.Since(t0)
			if err != nil || !strings.Contains(l, `"protocolVersion":"2025-11-25"`) {
				t.Fatalf("%s: initialize answered %q, %v", bin[0], l, err)
			}
			rss := vmRSS(t, cmd.Process.Pid)
			io.WriteString(in, call)
			if l, err := out.ReadString('\n'); err != nil || !strings.Contains(l, `"id":2,"result"`) {
				t.Fatalf("%s: tools/call answered %q, %v", bin[0], l, err)
			}
			callRSS := vmRSS(t, cmd.Process.Pid)
			in.Close()
			io.Copy(io.Discard, out)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%s: %v", bin[0], err)
			}
			if i >= 2 {
				results[b] = append(results[b], sample{took, rss, callRSS})
			}
		}
	}
	median := func(xs []sample, f func(sample) float64) float64 {
		v := make([]float64, len(xs))
		for i, x := range xs {
			v[i] = f(x)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	t.Logf("oo-claude doorman --mcp, %d samples each, medians:", n)
	t.Logf("%-10s %22s %14s %18s", "binary", "start → initialize", "VmRSS then", "after tools/call")
	for b, bin := range bins {
		rs := results[b]
		t.Logf("%-10s %19.2f ms %11.1f MiB %15.1f MiB", bin[0],
			median(rs, func(s sample) float64 { return float64(s.start.Microseconds()) / 1000 }),
			median(rs, func(s sample) float64 { return float64(s.rssKB) / 1024 }),
			median(rs, func(s sample) float64 { return float64(s.callKB) / 1024 }))
	}
}

// vmRSS returns a live process's resident set in KiB.
func vmRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
