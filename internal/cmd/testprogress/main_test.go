package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite testdata/sample.out")

// TestSample: a recorded `go test -json` run of a module with a passing, a
// skipping, a failing (with a failed subtest and a slow test), a test-less,
// a broken and a leaking package gives each package's line as it finished,
// the failures' output, the skip reasons, the slow package and the counts.
func TestSample(t *testing.T) {
	in, err := os.Open(filepath.Join("testdata", "sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	p := &progress{out: &out, now: time.Now, quiet: time.Hour, slow: time.Second}
	if err := p.run(in, nil); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "sample.out")
	if *update {
		os.WriteFile(golden, out.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(out.String(), "\n4 passed, 5 failed\n") {
		t.Errorf("the last line is not the counts:\n%s", out.String())
	}
}

// TestStillRunning: when no package has finished for the quiet period, a
// tick names the packages still running with their time so far; not
// before, and not again within the period.
func TestStillRunning(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	p := &progress{out: &out, now: func() time.Time { return now }, quiet: 30 * time.Second, slow: time.Minute}
	p.init()
	p.line(`{"Action":"start","Package":"github.com/oo-family/oo-claude/e2e"}`)
	p.line(`{"Action":"start","Package":"github.com/oo-family/oo-claude/door"}`)
	p.line(`{"Action":"pass","Package":"github.com/oo-family/oo-claude/door","Elapsed":0.5}`)
	now = now.Add(10 * time.Second)
	p.tick(now) // too early: nothing
	now = now.Add(25 * time.Second)
	p.tick(now)
	now = now.Add(5 * time.Second)
	p.tick(now) // within the period: not again
	p.line(`{"Action":"pass","Package":"github.com/oo-family/oo-claude/e2e","Elapsed":41}`)
	p.summary()
	want := "ok   github.com/oo-family/oo-claude/door  0.5s\n" +
		"… still running: e2e (35s)\n" +
		"ok   github.com/oo-family/oo-claude/e2e  41.0s\n" +
		"\n0 skipped\n0 passed, 0 failed\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestStillBuilding: while no test binary runs (go test builds them first;
// with -race on a cold machine that was minutes of silence), a tick after
// the quiet period says it is still building, with the time since the
// start or the last result; once a package runs, the tick names it.
func TestStillBuilding(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	p := &progress{out: &out, now: func() time.Time { return now }, quiet: 30 * time.Second, slow: time.Minute}
	p.init()
	now = now.Add(10 * time.Second)
	p.tick(now) // too early: nothing
	now = now.Add(25 * time.Second)
	p.tick(now)
	p.line(`{"Action":"start","Package":"github.com/oo-family/oo-claude/door"}`)
	p.line(`{"Action":"pass","Package":"github.com/oo-family/oo-claude/door","Elapsed":0.5}`)
	now = now.Add(40 * time.Second)
	p.tick(now)
	p.line(`{"Action":"start","Package":"github.com/oo-family/oo-claude/e2e"}`)
	now = now.Add(40 * time.Second)
	p.tick(now)
	want := "… still building the test binaries, nothing has run yet (35s)\n" +
		"ok   github.com/oo-family/oo-claude/door  0.5s\n" +
		"… still building the test binaries (40s)\n" +
		"… still running: e2e (40s)\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestNoResult: a test binary that ends while tests run (go test's
// -timeout panics inside a running test's output) fails its package with
// no fail event for those tests; their output, the panic's included, is
// printed and each counts as a failure.
func TestNoResult(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"m/p"}`,
		`{"Action":"output","Package":"m/p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"m/p","Test":"TestB","Output":"=== RUN   TestB\n"}`,
		`{"Action":"output","Package":"m/p","Test":"TestC","Output":"=== RUN   TestC\n"}`,
		`{"Action":"output","Package":"m/p","Test":"TestC","Output":"--- PASS: TestC (0.00s)\n"}`,
		`{"Action":"pass","Package":"m/p","Test":"TestC","Elapsed":0}`,
		`{"Action":"output","Package":"m/p","Test":"TestA","Output":"    a_test.go:3: hello a\n"}`,
		`{"Action":"output","Package":"m/p","Test":"TestA","Output":"panic: test timed out after 2s\n"}`,
		`{"Action":"output","Package":"m/p","Test":"TestA","Output":"\trunning tests:\n"}`,
		`{"Action":"output","Package":"m/p","Test":"TestA","Output":"\t\tTestA (2s)\n"}`,
		`{"Action":"output","Package":"m/p","Output":"FAIL\tm/p\t2.015s\n"}`,
		`{"Action":"fail","Package":"m/p","Elapsed":2.016}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	p := &progress{out: &out, now: time.Now, quiet: time.Hour, slow: time.Hour}
	if err := p.run(strings.NewReader(in), nil); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"--- NO RESULT: TestA (still running when the test binary ended)\n    a_test.go:3: hello a\npanic: test timed out after 2s\n",
		"FAIL m/p  2.0s\n",
		"\n1 passed, 1 failed\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "NO RESULT: TestB") {
		t.Errorf("TestB printed only === lines and is no failure of its own:\n%s", got)
	}
}
