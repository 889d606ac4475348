package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/station"
)

// sendSamplesEnv sets how many sends TestSendCost measures per case
// (default 3; BENCHMARKS.md records 20).
const sendSamplesEnv = "OO_CLAUDE_E2E_SEND_SAMPLES"

// TestSendCost measures the whole `oo-claude send` process (from starting
// it to its exit with the ack) on a station of 1, 50 and 500 registry rows,
// side by side in one run, the sizes' samples alternating round by round.
// Every row but the targets' is an unrelated live
// session (a sleep process of its own with its real procStart, the row
// shaped as the CLI writes it). The targets: a session whose doorman is
// fakes/fakedoorman in this process, acking at once (the sender's own cost,
// addressed by full id, name and pid), and two real sessions with the
// injected doorman, each addressed by full id: an interactive one under
// tmux, idle between lines, and a headless one (claude -p) whose tool runs
// all along (the real path). Each target has a registry of its own, so
// each holds exactly the target and the unrelated rows. Each sample uses a
// sender of its own, so the throttle runs (30 s, the default) and admits
// it. The fake target's sends have rounds of their own, before the real
// ones. When a sample count is set (a measurement), rows moved in or out
// are left to settle (fsx.SigSettle) before a size's sends, as a
// station's rows are. It logs the medians, each binary send's as a
// multiple of a Go hello world run the same way in the same rounds, and
// for the real targets how long after the enqueue row's timestamp the ack
// came; every send must be delivered with exit 0.
func TestSendCost(t *testing.T) {
	t.Parallel()
	n := sampleCount(t, sendSamplesEnv, 3)
	measuring := os.Getenv(sendSamplesEnv) != ""
	// The headless session runs one short tool round after another until
	// the test ends, so every line reaches it busy and is enqueued at once,
	// and each round's end drains the receiver's queue (it holds only so
	// many queued lines). The interactive session's requests get the
	// default answer.
	const headlessPrompt = "take lines while the tool runs"
	stop := make(chan struct{})
	w := newWorld(t, fakemodel.Options{DefaultReply: fakemodel.Text("noted"), Handler: func(q *fakemodel.Request) fakemodel.Reply {
		if !q.MessagesContain(headlessPrompt) {
			return fakemodel.Reply{}
		}
		select {
		case <-stop:
			return fakemodel.Text("done")
		default:
			return fakemodel.Bash("sleep 1")
		}
	}})
	t.Cleanup(func() { close(stop) })
	// It keeps its config, and so its registry, apart from the
	// interactive session's, so that each registry holds one target.
	headlessConfig := filepath.Join(w.root, "c2")
	if err := os.MkdirAll(headlessConfig, 0o700); err != nil {
		t.Fatal(err)
	}
	headless := w.start(w.withDoorman(pargs(headlessPrompt, "--allowedTools", "Bash")...), "CLAUDE_CONFIG_DIR="+headlessConfig)
	headless.waitModel(30*time.Second, "with its prompt", func(q *fakemodel.Request) bool {
		return !fakemodel.IsSideRequest(q) && q.MessagesContain(headlessPrompt)
	})
	headlessDir := filepath.Join(headlessConfig, "sessions")
	headlessSID, err := waitRegistryRow(filepath.Join(headlessDir, strconv.Itoa(headless.pid())+".json"), 30*time.Second, headless.exited)
	if err != nil {
		headless.fatalf("registry row: %v", err)
	}
	headless.waitHeartbeat(headlessSID.SessionID, 30*time.Second, "a following doorman", following(headlessSID.SessionID))
	real := w.startInteractive(interactiveOpts{})
	real.waitStatus(10*time.Second, "idle")

	// The fake target lives in a registry of its own (OO_CLAUDE_SESSIONS_DIR
	// for its sends), so each registry holds exactly its target and the
	// unrelated rows.
	realDir, fakeDir := filepath.Join(w.config, "sessions"), filepath.Join(w.root, "fake-sessions")
	if err := os.MkdirAll(fakeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The fake doorman's heartbeat names the sleeper as its owner, as a
	// real doorman names its claude process, so a send by full id reads
	// the target's row directly (the real path), not the whole registry.
	fake := sleeper(t)
	fakeSID, fakeName := uuid.NewString(), "fake-target"
	writeRowFor(t, fakeDir, fake, fakeSID, fakeName, time.Now())
	fakedoorman.Start(t, w.inboxDir(), fakeSID, fakedoorman.Options{OwnerPID: fake})

	type kase struct {
		name, target string
		env          []string
		// lib: the line goes through claudeinbox.Sender in this process
		// (a program that imports the package), not the oo-claude binary.
		lib bool
	}
	fakeEnv := []string{"OO_CLAUDE_SESSIONS_DIR=" + fakeDir}
	cases := []kase{
		{"fake id", fakeSID, fakeEnv, false},
		{"fake name", fakeName, fakeEnv, false},
		{"fake pid", strconv.Itoa(fake), fakeEnv, false},
		{"real id", real.SessionID, nil, false},
		{"real -p id", headlessSID.SessionID, []string{"OO_CLAUDE_SESSIONS_DIR=" + headlessDir}, false},
		{"lib real id", real.SessionID, nil, true},
		{"lib real -p", headlessSID.SessionID, []string{"OO_CLAUDE_SESSIONS_DIR=" + headlessDir}, true},
	}
	// One Sender a registry, made once and kept, as a program that
	// imports the package keeps its own.
	senders := map[string]*claudeinbox.Sender{}
	// getenv reads the environment a case's sends run with.
	getenv := func(c kase) func(string) string {
		env := map[string]string{}
		for _, kv := range append(w.env(w.knobEnv()...), c.env...) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		return func(k string) string { return env[k] }
	}
	for _, c := range cases {
		if !c.lib {
			continue
		}
		cfg, err := station.ConfigFromEnv(getenv(c))
		if err != nil {
			t.Fatal(err)
		}
		s := claudeinbox.NewSender(cfg)
		s.Wait = 15 * time.Second
		senders[c.name] = s
	}
	sizes := sendCostRows(t)
	results := map[string]map[int]time.Duration{}
	lags := map[string][]time.Duration{} // ack ts − queued_at, confirmed acks
	// The three parts of a confirmed send, by target: front (the send's
	// start → the receiver's enqueue row timestamp), floor (that timestamp
	// → the ack: the receiver's transcript batch timer, then the doorman's
	// ack on the row reaching the file), back (the ack → the send's exit).
	parts := map[string][3][]time.Duration{}
	// The front in two: send start → the doorman's door write, and the
	// door write → the enqueue row's timestamp.
	fronts := map[string][2][]time.Duration{}
	// The unrelated rows are made once, parked beside each registry, and
	// moved in before each size's sends, so that the sizes' samples
	// alternate round by round: a size measured after another would read
	// the machine's drift (the sessions' start, caches) as its own cost.
	regs := []string{realDir, fakeDir, headlessDir}
	var unrelated []string // file names, in the order they go in
	for i := 1; i < sizes[len(sizes)-1]; i++ {
		pid, sid, name := sleeper(t), uuid.NewString(), fmt.Sprintf("other-%03d", i)
		started := time.Now().Add(-time.Duration(i) * time.Minute)
		for _, dir := range regs {
			if err := os.MkdirAll(dir+".parked", 0o700); err != nil {
				t.Fatal(err)
			}
			writeRowFor(t, dir+".parked", pid, sid, name, started)
		}
		unrelated = append(unrelated, strconv.Itoa(pid)+".json")
	}
	in := 0 // unrelated rows in the registries now
	arrange := func(rows int) (moved bool) {
		move := func(names []string, from, to string) {
			for _, name := range names {
				for _, dir := range regs {
					if err := os.Rename(filepath.Join(dir+from, name), filepath.Join(dir+to, name)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if want := rows - 1; want > in {
			move(unrelated[in:want], ".parked", "")
			in = want
			return true
		} else if want < in {
			move(unrelated[want:in], "", ".parked")
			in = want
			return true
		}
		return false
	}
	// A station's rows are not all new: after rows are moved in, wait
	// until they are settled (changed more than fsx.SigSettle before:
	// station's row cache keeps no row changed since) and resolve each
	// target once in this process, so that the cache holds them, as it
	// does on a station whose sessions are not all just started. The
	// first send after a registry-wide change reads every row
	// (BENCHMARKS.md).
	settle := func() {
		time.Sleep(fsx.SigSettle + 100*time.Millisecond)
		for _, c := range cases {
			if c.lib {
				continue
			}
			p, err := station.PathsFromEnv(getenv(c))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := station.New(p).Resolve(c.target); err != nil {
				t.Fatalf("resolve %s: %v", c.target, err)
			}
		}
	}
	took := map[string]map[int][]time.Duration{}
	// A Go hello world, built as oo-claude is (static), run the same way
	// (the same exec, environment and pipes) once before each size's sends
	// of each round: the ratio of a send to it is measured side by side,
	// at the same load, not against a hello world timed apart.
	hello := helloBinary(t)
	var hellos, helloMains []time.Duration // exec → exit, exec → its main
	sample, turn := 0, 0
	// The fake cases are measured in rounds of their own, before any real
	// send: a line to a real session makes it work (a turn, a model
	// request to the fake model in this process) for milliseconds after
	// its send returned, and that work landed on whatever case ran next
	// (the full-id send, after the last real case: 3.9× the hello world,
	// against 1.5× when it ran first).
	var fakes, reals []kase
	for _, c := range cases {
		if strings.HasPrefix(c.name, "fake ") {
			fakes = append(fakes, c)
		} else {
			reals = append(reals, c)
		}
	}
	for _, phase := range [][]kase{fakes, reals} {
		for i := -2; i < n; i++ { // two warm-up rounds
			for _, want := range sizes {
				// Every size waits alike after its rows moved, so that
				// neither reads the others' idle machine as its own. The
				// suite's run (no sample count set) checks delivery only,
				// and does not wait.
				if arrange(want) && measuring {
					settle()
				}
				if hello != "" && phase[0].name == fakes[0].name {
					r := <-w.ooAsyncVia([]string{hello}, nil)
					if r.code != 0 {
						t.Fatalf("hello world: %s", r)
					}
					if i >= 0 {
						hellos = append(hellos, r.took)
						if ns, err := strconv.ParseInt(strings.TrimSpace(r.stdout), 10, 64); err == nil {
							helloMains = append(helloMains, time.Unix(0, ns).Sub(r.start))
						}
					}
				}
				// The cases take turns at going first: the first send after
				// the registry's change and the hello world reads colder
				// caches and a fake doorman long asleep.
				first := turn % len(phase)
				turn++
				for k := range phase {
					c := phase[(first+k)%len(phase)]
					sample++
					line, from := fmt.Sprintf("cost sample %d", sample), fmt.Sprintf("cost-%d", sample)
					var (
						start, exit                         time.Time
						confirm, queuedAt, ackTS, inboxPath string
						msgID                               string
					)
					if c.lib {
						start = time.Now()
						v, err := senders[c.name].Send(context.Background(), claudeinbox.Request{Target: c.target, Line: line, From: from})
						exit = time.Now()
						if err != nil || !strings.HasPrefix(string(v.Class), "delivered-") {
							real.fatalf("library send to %s at %d rows: %s, %v; want delivered-*\nheadless session: %s", c.name, want, v.Class, err, headless.diag())
						}
						confirm, queuedAt, inboxPath, msgID = v.Confirm, v.QueuedAt, v.Inbox, v.MsgID
						ackTS = ackTime(t, v.Inbox, v.MsgID)
					} else {
						r := w.oo([]string{"send", c.target, line, "--from", from, "--min-interval", "30", "--wait", interactiveWait, "--json"}, c.env...)
						exit = time.Now()
						start = exit.Add(-r.took)
						var rc map[string]any
						if r.code != 0 || json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &rc) != nil || !strings.HasPrefix(str(rc, "class"), "delivered-") {
							real.fatalf("send to %s at %d rows: want delivered-*, exit 0\n%s\nheadless session: %s", c.name, want, r, headless.diag())
						}
						a, _ := rc["ack"].(map[string]any)
						confirm, queuedAt, ackTS, inboxPath, msgID = str(a, "confirm"), str(a, "queued_at"), str(a, "ts"), str(rc, "inbox"), str(rc, "msg_id")
					}
					if c.target == real.SessionID {
						// The line starts a turn of the interactive session,
						// whose work would land on the next case's time: the
						// next waits until the turn is over.
						real.waitStatus(30*time.Second, "idle")
					}
					if i < 0 {
						continue
					}
					if took[c.name] == nil {
						took[c.name] = map[int][]time.Duration{}
					}
					took[c.name][want] = append(took[c.name][want], exit.Sub(start))
					if confirm == "transcript" {
						// How long after the receiver stamped its enqueue row
						// the doorman acked it: the row's way to the file.
						q, qerr := time.Parse(time.RFC3339Nano, queuedAt)
						at, aerr := time.Parse(time.RFC3339Nano, ackTS)
						if qerr == nil && aerr == nil {
							lags[c.name] = append(lags[c.name], at.Sub(q))
							p := parts[c.name]
							p[0], p[1], p[2] = append(p[0], q.Sub(start)), append(p[1], at.Sub(q)), append(p[2], exit.Sub(at))
							parts[c.name] = p
							// The front in two: to the doorman's door write
							// (its attempt record's at: this project's part)
							// and from it to the receiver's stamp.
							if w, ok := doorWriteAt(inboxPath, msgID); ok {
								f := fronts[c.name]
								f[0], f[1] = append(f[0], w.Sub(start)), append(f[1], q.Sub(w))
								fronts[c.name] = f
							}
						}
					}
				}
			}
		}
	}
	for name, bySize := range took {
		results[name] = map[int]time.Duration{}
		for rows, d := range bySize {
			slices.Sort(d)
			results[name][rows] = d[len(d)/2]
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "whole oo-claude send process, median of %d (ms), by registry rows:\n%-11s", n, "target")
	for _, rows := range sizes {
		fmt.Fprintf(&b, " %8s", fmt.Sprintf("%d rows", rows))
	}
	for _, c := range cases {
		fmt.Fprintf(&b, "\n%-11s", c.name)
		for _, rows := range sizes {
			fmt.Fprintf(&b, " %8.1f", float64(results[c.name][rows].Microseconds())/1000)
		}
	}
	if len(hellos) > 0 {
		slices.Sort(hellos)
		h := hellos[len(hellos)/2]
		fmt.Fprintf(&b, "\nhello world, the same exec, before each size's sends: %.1f ms (median of %d); as × hello:", float64(h.Microseconds())/1000, len(hellos))
		for _, c := range cases {
			if c.lib {
				continue
			}
			fmt.Fprintf(&b, "\n  %-11s", c.name)
			for _, rows := range sizes {
				fmt.Fprintf(&b, " %7.2fx", float64(results[c.name][rows])/float64(h))
			}
		}
	}
	for _, c := range cases {
		if l := lags[c.name]; len(l) > 0 {
			slices.Sort(l)
			fmt.Fprintf(&b, "\n%s: the ack came %.1f ms (median of %d) after the enqueue row's timestamp", c.name, float64(l[len(l)/2].Microseconds())/1000, len(l))
		}
	}
	ms := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	for _, c := range cases {
		if p := parts[c.name]; len(p[0]) > 0 {
			fmt.Fprintf(&b, "\n%s: front %.1f ms (send start → enqueue row ts), floor %.1f ms (→ ack), back %.1f ms (→ exit), medians of %d", c.name, ms(p[0]), ms(p[1]), ms(p[2]), len(p[0]))
		}
		if f := fronts[c.name]; len(f[0]) > 0 {
			fmt.Fprintf(&b, "\n%s: the front's parts: send start → the doorman's door write (its attempt record's at) %.1f ms, → enqueue row ts %.1f ms (ms stamps), medians of %d", c.name, ms(f[0]), ms(f[1]), len(f[0]))
		}
	}
	// What no send from a new Go process can go under, whatever its own
	// work: a Go program's start before its main, and its exit, are the
	// hello world's; the receiver's part and the floor are the receiver's.
	if len(helloMains) > 0 && len(hellos) > 0 {
		fmt.Fprintf(&b, "\nhello world: its main began %.1f ms after the exec, its exit was seen %.1f ms after the exec (medians of %d)", ms(helloMains), ms(hellos), len(helloMains))
		for _, c := range cases {
			p, f := parts[c.name], fronts[c.name]
			if c.lib || len(p[1]) == 0 || len(f[1]) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n%s: a send process can be no faster than front %.1f ms (hello's main + door write → enqueue ts), whole %.1f ms (hello's exit + that + floor)", c.name, ms(helloMains)+ms(f[1]), ms(hellos)+ms(f[1])+ms(p[1]))
		}
	}
	t.Log(b.String())
}

// helloBinary builds a Go hello world as oo-claude is built for the
// benchmarks (CGO_ENABLED=0) and returns its path; "" (logged) without a
// go toolchain.
func helloBinary(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Logf("no go toolchain: no hello world beside the sends (%v)", err)
		return ""
	}
	dir := t.TempDir()
	// It prints the time its main began (Unix ns): the part of a new Go
	// process that comes before any work of its own.
	for name, body := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.22\n",
		"main.go": "package main\n\nimport (\n\t\"os\"\n\t\"strconv\"\n\t\"time\"\n)\n\nfunc main() { os.Stdout.WriteString(strconv.FormatInt(time.Now().UnixNano(), 10) + \"\\n\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goBin, "build", "-o", "hello", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build hello: %v\n%s", err, out)
	}
	return filepath.Join(dir, "hello")
}

// ackTime is the ts of the ack of msgID in inboxPath's ack file.
func ackTime(t *testing.T, inboxPath, msgID string) string {
	t.Helper()
	acks, _, err := inbox.ReadAcks(inboxPath+".ack", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range slices.Backward(acks) {
		if a.MsgID == msgID {
			return a.TS
		}
	}
	return ""
}

// doorWriteAt is when the doorman of inbox made its door write of the
// line msgID: its attempt record's at (taken just before the dial). The
// record is the last write's, so it is read after the send's verdict,
// before the next line is sent.
func doorWriteAt(inboxPath, msgID string) (time.Time, bool) {
	if inboxPath == "" {
		return time.Time{}, false
	}
	a, err := inbox.ReadAttempt(inboxPath + ".doorman.attempt")
	if err != nil || a.MsgID != msgID {
		return time.Time{}, false
	}
	at, err := jsonrow.ParseTime(a.At)
	return at, err == nil
}

// sleeper starts a process that lives until the end of the test, whose pid
// can carry a registry row, and returns its pid.
func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "3600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// writeRowFor writes a registry row for a live pid as the CLI writes an
// interactive session's (its real procStart, the keys and their order).
func writeRowFor(t *testing.T, dir string, pid int, sid, name string, started time.Time) {
	t.Helper()
	ms := started.UnixMilli()
	row := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"cwd":"/home/u/proj","startedAt":%d,"procStart":%q,"version":"2.1.332","peerProtocol":1,"peerFeatures":["notify_idle","reply_across_default_dirs","artifact_yield"],"kind":"interactive","entrypoint":"cli","pidDomain":"linux:e2e","asksForConvertedSkills":null,"messagingSocketPath":"/tmp/cc-socks/%d.sock","name":%q,"nameSource":"derived","nameSince":%d,"status":"idle","updatedAt":%d,"statusUpdatedAt":%d}`,
		pid, sid, ms, procStart(t, pid), pid, name, ms, ms, ms)
	path := filepath.Join(dir, strconv.Itoa(pid)+".json")
	if err := os.WriteFile(path+".tmp", []byte(row), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// sendCostRowsEnv picks TestSendCost's station sizes, as registry rows
// ("1,500"; default 1, 50 and 500).
const sendCostRowsEnv = "OO_CLAUDE_E2E_SEND_ROWS"

func sendCostRows(t *testing.T) []int {
	t.Helper()
	v := os.Getenv(sendCostRowsEnv)
	if v == "" {
		return []int{1, 50, 500}
	}
	var sizes []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || (len(sizes) > 0 && n <= sizes[len(sizes)-1]) {
			t.Fatalf("%s=%q: want increasing counts ≥ 1, comma-separated", sendCostRowsEnv, v)
		}
		sizes = append(sizes, n)
	}
	return sizes
}
