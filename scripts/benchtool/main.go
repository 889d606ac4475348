//go:build ignore

// Command benchtool is scripts/bench.sh's measuring hand (go build -o benchtool
// scripts/benchtool/main.go): what a shell cannot time finely enough.
//
//	benchtool hello                      print "hello" (the paired reference)
//	benchtool pair N HELLO -- CMD...     run HELLO and CMD alternately N times
//	                                     (after 3 warm-ups each); print both
//	                                     medians in ms and their ratio; CMD
//	                                     may start with @FILE, as below
//	benchtool interleave N CMD -- CMD ...  run the commands in turn N times
//	                                     (after 3 warm-ups each; the first
//	                                     place moves one command a round);
//	                                     print each one's median in ms and
//	                                     its ratio to the first's (builds
//	                                     side by side). A CMD may start with
//	                                     @FILE: KEY=VALUE lines added to its
//	                                     environment (a station's knobs), no
//	                                     env(1) exec; {n} in an argument is
//	                                     the run's number
//	benchtool cpu PID SECONDS            CPU time (ms) and voluntary context
//	                                     switches of PID's threads over SECONDS,
//	                                     scaled to a minute
//	benchtool watchlat N INBOX -- CMD... start CMD (oo-claude watch --json), then
//	                                     N times (after 3 warm-ups) append a line
//	                                     to INBOX and time it until the event
//	                                     holding the line is printed; print the
//	                                     median and range in ms
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		die("usage: benchtool hello|pair|interleave|cpu|watchlat ...")
	}
	switch os.Args[1] {
	case "hello":
		fmt.Println("hello")
	case "pair":
		pair(os.Args[2:])
	case "interleave":
		interleave(os.Args[2:])
	case "cpu":
		cpu(os.Args[2:])
	case "watchlat":
		watchlat(os.Args[2:])
	default:
		die("unknown command " + os.Args[1])
	}
}

func die(msg string) {
	fmt.Fprintln(os.Stderr, "benchtool:", msg)
	os.Exit(2)
}

func count(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		die("bad count " + s)
	}
	return n
}

// afterDashes splits args at "--".
func afterDashes(args []string) ([]string, []string) {
	i := slices.Index(args, "--")
	if i < 0 || i == len(args)-1 {
		die("want -- CMD...")
	}
	return args[:i], args[i+1:]
}

func runOnce(argv []string) time.Duration { return runIn(nil, argv) }

// runIn runs argv with env added to this process's environment.
func runIn(env, argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		die(fmt.Sprintf("%v: %v\n%s", argv, err, out))
	}
	return time.Since(start)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	if len(d)%2 == 1 {
		return d[len(d)/2]
	}
	return (d[len(d)/2-1] + d[len(d)/2]) / 2
}

// withEnvFile splits a command whose first word is @FILE into the
// KEY=VALUE lines of FILE (blank lines and # comments skipped) and the
// rest; another command has no environment of its own.
func withEnvFile(c []string) (env, argv []string) {
	f, ok := strings.CutPrefix(c[0], "@")
	if !ok {
		return nil, c
	}
	b, err := os.ReadFile(f)
	if err != nil {
		die(err.Error())
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			env = append(env, l)
		}
	}
	if len(c) == 1 {
		die("an empty command after " + c[0])
	}
	return env, c[1:]
}

func pair(args []string) {
	head, argv := afterDashes(args)
	if len(head) != 2 {
		die("pair N HELLO -- CMD...")
	}
	n, hello := count(head[0]), []string{head[1], "hello"}
	env, argv := withEnvFile(argv)
	for range 3 {
		runOnce(hello)
		runIn(env, argv)
	}
	var h, c []time.Duration
	for range n {
		h = append(h, runOnce(hello))
		c = append(c, runIn(env, argv))
	}
	mc, mh := median(c), median(h)
	fmt.Printf("%.1f ms (hello %.1f ms, %.2fx)\n", ms(mc), ms(mh), float64(mc)/float64(mh))
}

func interleave(args []string) {
	if len(args) < 2 {
		die("interleave N CMD -- CMD ...")
	}
	n := count(args[0])
	var cmds [][]string
	for rest := args[1:]; len(rest) > 0; {
		i := slices.Index(rest, "--")
		if i < 0 {
			i = len(rest)
		}
		if i == 0 {
			die("an empty command")
		}
		cmds = append(cmds, rest[:i])
		rest = rest[min(i+1, len(rest)):]
	}
	type command struct{ label, env, argv []string }
	var runs []command
	for _, c := range cmds {
		r := command{label: c}
		r.env, r.argv = withEnvFile(c)
		runs = append(runs, r)
	}
	seq := 0
	run := func(c command) time.Duration {
		seq++
		argv := make([]string, len(c.argv))
		for i, a := range c.argv {
			argv[i] = strings.ReplaceAll(a, "{n}", strconv.Itoa(seq))
		}
		return runIn(c.env, argv)
	}
	for range 3 {
		for _, c := range runs {
			run(c)
		}
	}
	d := make([][]time.Duration, len(cmds))
	for round := range n {
		for k := range runs {
			j := (round + k) % len(runs)
			d[j] = append(d[j], run(runs[j]))
		}
	}
	first := median(d[0])
	for j, c := range cmds {
		m := median(d[j])
		fmt.Printf("%8.3f ms  %5.2fx  %s\n", ms(m), float64(m)/float64(first), strings.Join(c, " "))
	}
}

// cpuOf sums PID's threads' time on a CPU (schedstat, ns) and voluntary
// context switches.
func cpuOf(pid string) (ns, switches int64) {
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		die(err.Error())
	}
	for _, t := range tasks {
		dir := "/proc/" + pid + "/task/" + t.Name()
		if b, err := os.ReadFile(dir + "/schedstat"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				ns += v
			}
		}
		if b, err := os.ReadFile(dir + "/status"); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
					n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					switches += n
				}
			}
		}
	}
	return ns, switches
}

func cpu(args []string) {
	if len(args) != 2 {
		die("cpu PID SECONDS")
	}
	secs := count(args[1])
	ns0, sw0 := cpuOf(args[0])
	time.Sleep(time.Duration(secs) * time.Second)
	ns1, sw1 := cpuOf(args[0])
	scale := 60 / float64(secs)
	fmt.Printf("%.1f ms CPU, %.0f wake-ups a minute (%d s window scaled)\n", float64(ns1-ns0)/1e6*scale, float64(sw1-sw0)*scale, secs)
}

func watchlat(args []string) {
	head, argv := afterDashes(args)
	if len(head) != 2 {
		die("watchlat N INBOX -- CMD...")
	}
	n, inbox := count(head[0]), head[1]
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		die(err.Error())
	}
	if err := cmd.Start(); err != nil {
		die(err.Error())
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	f, err := os.OpenFile(inbox, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		die(err.Error())
	}
	defer f.Close()
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	var took []time.Duration
	for i := -3; i < n; i++ {
		mark := fmt.Sprintf("watch latency %s %d", tag, i+3)
		// The first append waits for the watch to be up: it is repeated
		// until its event comes (each a line of its own).
		for try := 0; ; try++ {
			m := mark
			if try > 0 {
				m = fmt.Sprintf("%s retry %d", mark, try)
			}
			start := time.Now()
			if _, err := f.WriteString("[bench \U0001F4E1] " + m + "\n"); err != nil {
				die(err.Error())
			}
			if d, ok := await(lines, m, start); ok {
				if i >= 0 {
					took = append(took, d)
				}
				break
			}
			if try > 20 {
				die("no event for " + m)
			}
		}
	}
	fmt.Printf("%.2f ms (median of %d; %.2f–%.2f)\n", ms(median(took)), n, ms(slices.Min(took)), ms(slices.Max(took)))
}

// await waits up to a second for a printed line holding mark.
func await(lines <-chan string, mark string, start time.Time) (time.Duration, bool) {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				die("the watch ended")
			}
			if strings.Contains(l, mark+`"`) {
				return time.Since(start), true
			}
		case <-t.C:
			return 0, false
		}
	}
}
