// Command testprogress turns `go test -json` into progress a person can
// follow: one line per package as it finishes (ok, FAIL, no tests) with
// its time, a line naming the packages still running whenever nothing has
// finished for a while (or saying it is still building while no test
// binary runs), the output of each failed test, the skipped tests
// with their reasons, the slowest packages and tests, and last a line
// "N passed, N failed" (tests and subtests; a package that fails without a
// failing test, as a build failure or a leak check does, counts as one).
//
//	go test -json ./... | go run ./internal/cmd/testprogress
//
// scripts/test.sh runs it so. It exits 0 whatever the tests did (the test
// command's exit code is go test's); 1 only when its input cannot be read.
// A line that is not a test2json event is copied through as it is.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	ticks := time.NewTicker(15 * time.Second)
	defer ticks.Stop()
	p := &progress{out: os.Stdout, now: time.Now, quiet: 30 * time.Second, slow: 20 * time.Second}
	if err := p.run(os.Stdin, ticks.C); err != nil {
		fmt.Fprintf(os.Stderr, "testprogress: %v\n", err)
		os.Exit(1)
	}
}

// event is one test2json event (go doc test2json).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Elapsed    float64
	Output     string
}

// slowTest is a top-level test that took long.
type slowTest struct {
	name    string // "pkg TestX"
	elapsed float64
}

// pkgState is what is known of one package's run.
type pkgState struct {
	started time.Time
	output  []string            // package-level output
	tests   map[string][]string // each test's output, until it ends
	failed  []string            // the failed tests, in order
}

type progress struct {
	out   io.Writer
	now   func() time.Time
	quiet time.Duration // name the running packages after this long without a result
	slow  time.Duration // a package taking this long is named slow

	pkgs         map[string]*pkgState
	running      []string
	lastResult   time.Time
	passed       int
	failed       int
	skipped      []string // "pkg TestX: reason"
	elapsed      map[string]float64
	slowTests    []slowTest // top-level tests that took p.slow or longer
	notedRunning time.Time
	finished     int // packages finished
}

// run reads events from r until EOF; ticks wakes it to name the packages
// still running.
func (p *progress) run(r io.Reader, ticks <-chan time.Time) error {
	p.init()
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		errc <- sc.Err()
		close(lines)
	}()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				p.summary()
				return <-errc
			}
			p.line(l)
		case now := <-ticks:
			p.tick(now)
		}
	}
}

func (p *progress) init() {
	p.pkgs, p.elapsed = map[string]*pkgState{}, map[string]float64{}
	p.lastResult = p.now()
}

func (p *progress) line(l string) {
	var e event
	if !strings.HasPrefix(l, "{") || json.Unmarshal([]byte(l), &e) != nil {
		fmt.Fprintln(p.out, l)
		return
	}
	switch e.Action {
	case "build-output":
		fmt.Fprint(p.out, e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	s := p.pkgs[e.Package]
	if s == nil {
		s = &pkgState{started: p.now(), tests: map[string][]string{}}
		p.pkgs[e.Package] = s
		p.running = append(p.running, e.Package)
	}
	if e.Test == "" {
		switch e.Action {
		case "output":
			s.output = append(s.output, e.Output)
		case "pass", "fail", "skip":
			p.finish(e, s)
		}
		return
	}
	switch e.Action {
	case "output":
		s.tests[e.Test] = append(s.tests[e.Test], e.Output)
	case "pass":
		p.passed++
		delete(s.tests, e.Test)
		p.noteSlow(e)
	case "fail":
		p.failed++
		s.failed = append(s.failed, e.Test)
		p.noteSlow(e)
	case "skip":
		p.skipped = append(p.skipped, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, skipReason(s.tests[e.Test])))
		delete(s.tests, e.Test)
	}
}

// finish prints a package's result line, after the output of its failures.
func (p *progress) finish(e event, s *pkgState) {
	p.running = slices.DeleteFunc(p.running, func(x string) bool { return x == e.Package })
	p.lastResult = p.now()
	p.finished++
	p.elapsed[e.Package] = e.Elapsed
	if e.Action == "fail" {
		for _, t := range s.failed {
			// A parent's output holds only its own lines, ending with
			// its "--- FAIL" line; each failed subtest prints its own.
			for _, o := range s.tests[t] {
				if !strings.HasPrefix(strings.TrimSpace(o), "=== ") {
					fmt.Fprint(p.out, o)
				}
			}
		}
		// Tests with no result of their own: the binary ended while they
		// ran (go test's -timeout panics inside the running test's output,
		// a crash): their output says why.
		for _, t := range slices.Sorted(maps.Keys(s.tests)) {
			if slices.Contains(s.failed, t) || !hasNews(s.tests[t]) {
				continue
			}
			p.failed++
			fmt.Fprintf(p.out, "--- NO RESULT: %s (still running when the test binary ended)\n", t)
			for _, o := range s.tests[t] {
				if !strings.HasPrefix(strings.TrimSpace(o), "=== ") {
					fmt.Fprint(p.out, o)
				}
			}
			s.failed = append(s.failed, t)
		}
		if len(s.failed) == 0 { // a build failure, a panic, a leak check
			p.failed++ // counted as one failure, so the counts never say 0 of a failed run
			for _, o := range s.output {
				fmt.Fprint(p.out, o)
			}
		}
	}
	status := map[string]string{"pass": "ok  ", "fail": "FAIL", "skip": "?   "}[e.Action]
	note := ""
	switch {
	case e.Action == "skip":
		note = "  [no test files]"
	case time.Duration(e.Elapsed*float64(time.Second)) >= p.slow:
		note = "  (slow)"
	}
	if e.Action == "skip" {
		fmt.Fprintf(p.out, "%s %s%s\n", status, e.Package, note)
	} else {
		fmt.Fprintf(p.out, "%s %s  %.1fs%s\n", status, e.Package, e.Elapsed, note)
	}
	delete(p.pkgs, e.Package)
}

// hasNews reports whether a test's output holds more than go test's own
// === RUN/PAUSE/CONT lines.
func hasNews(out []string) bool {
	for _, o := range out {
		if !strings.HasPrefix(strings.TrimSpace(o), "=== ") {
			return true
		}
	}
	return false
}

func (p *progress) noteSlow(e event) {
	if !strings.Contains(e.Test, "/") && time.Duration(e.Elapsed*float64(time.Second)) >= p.slow {
		p.slowTests = append(p.slowTests, slowTest{short(e.Package) + " " + e.Test, e.Elapsed})
	}
}

// tick names the packages still running when nothing finished for a while,
// or, while no test binary runs (go test is building them: minutes with
// -race on a cold machine), says so.
func (p *progress) tick(now time.Time) {
	if now.Sub(p.lastResult) < p.quiet || now.Sub(p.notedRunning) < p.quiet {
		return
	}
	p.notedRunning = now
	if len(p.running) == 0 {
		what := "the test binaries"
		if p.finished == 0 {
			what += ", nothing has run yet"
		}
		fmt.Fprintf(p.out, "… still building %s (%.0fs)\n", what, now.Sub(p.lastResult).Seconds())
		return
	}
	names := make([]string, len(p.running))
	for i, name := range p.running {
		names[i] = fmt.Sprintf("%s (%.0fs)", short(name), now.Sub(p.pkgs[name].started).Seconds())
	}
	fmt.Fprintf(p.out, "… still running: %s\n", strings.Join(names, ", "))
}

func (p *progress) summary() {
	if len(p.skipped) > 0 {
		fmt.Fprintf(p.out, "\nskipped (%d):\n", len(p.skipped))
		for _, s := range p.skipped {
			fmt.Fprintf(p.out, "  %s\n", s)
		}
	}
	var names []string
	for name, el := range p.elapsed {
		if time.Duration(el*float64(time.Second)) >= p.slow {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return p.elapsed[names[i]] > p.elapsed[names[j]] })
	if len(names) > 0 {
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s %.0fs", short(n), p.elapsed[n])
		}
		fmt.Fprintf(p.out, "\nslowest: %s\n", strings.Join(parts, ", "))
	}
	if len(p.slowTests) > 0 {
		sort.SliceStable(p.slowTests, func(i, j int) bool { return p.slowTests[i].elapsed > p.slowTests[j].elapsed })
		var parts []string
		for _, t := range p.slowTests[:min(len(p.slowTests), 5)] {
			parts = append(parts, fmt.Sprintf("%s %.0fs", t.name, t.elapsed))
		}
		fmt.Fprintf(p.out, "slowest tests: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(p.out, "\n%d skipped\n%d passed, %d failed\n", len(p.skipped), p.passed, p.failed)
}

// skipReason is the t.Skip message in a skipped test's output: the lines
// after its "=== RUN" line, without the "--- SKIP" line, joined.
func skipReason(out []string) string {
	var parts []string
	for _, o := range out {
		o = strings.TrimSpace(o)
		if o == "" || strings.HasPrefix(o, "=== ") || strings.HasPrefix(o, "--- SKIP") {
			continue
		}
		// "file_test.go:12: reason": keep the reason.
		if i := strings.Index(o, ": "); i > 0 && strings.Contains(o[:i], ".go:") {
			o = o[i+2:]
		}
		parts = append(parts, o)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// short drops the module path from a package path.
func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/oo-family/oo-claude/")
}
