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
// start to its answer to initialize, its resident memory (VmRSS) then and
// after a tools/call, and the CPU (user + system) of the whole session
// (initialize, tools/list, tools/call, EOF, exit): the median of the
// samples, binaries interleaved; and each binary's size.
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
		cpu           time.Duration
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
	const list = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"tools/list"}` + "\n"
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
			io.WriteString(in, list+call)
			// The two answers may come in either order.
			l1, err1 := out.ReadString('\n')
			l2, err2 := out.ReadString('\n')
			if both := l1 + l2; err1 != nil || err2 != nil || !strings.Contains(both, `"id":3,"result"`) || !strings.Contains(both, `"id":2,"result"`) {
				t.Fatalf("%s: tools/list and tools/call answered %q, %v %v", bin[0], both, err1, err2)
			}
			callRSS := vmRSS(t, cmd.Process.Pid)
			in.Close()
			io.Copy(io.Discard, out)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%s: %v", bin[0], err)
			}
			if i >= 2 {
				cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				results[b] = append(results[b], sample{took, rss, callRSS, cpu})
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
	t.Logf("%-10s %22s %14s %18s %14s %10s", "binary", "start → initialize", "VmRSS then", "after tools/call", "CPU/session", "size")
	for b, bin := range bins {
		rs := results[b]
		fi, err := os.Stat(bin[1])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-10s %19.2f ms %11.1f MiB %15.1f MiB %11.1f ms %7.1f MB", bin[0],
			median(rs, func(s sample) float64 { return float64(s.start.Microseconds()) / 1000 }),
			median(rs, func(s sample) float64 { return float64(s.rssKB) / 1024 }),
			median(rs, func(s sample) float64 { return float64(s.callKB) / 1024 }),
			median(rs, func(s sample) float64 { return float64(s.cpu.Microseconds()) / 1000 }),
			float64(fi.Size())/1e6)
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
