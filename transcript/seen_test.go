package transcript_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/internal/hostile"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/transcript"
)

// absorbedRow is the queued_command attachment row Claude Code appends
// when it absorbs a peer line into a running turn (shaped as recorded in
// testdata/real/steered-turn.jsonl).
func absorbedRow(msgID string) string {
	return `{"parentUuid":"899e874e-1e2c-4d59-833a-8634d7d83317","isSidechain":false,"attachment":{"type":"queued_command","prompt":"[e2e 📡] hi","commandMode":"prompt","origin":{"kind":"peer","from":"e2e","verifiedPeerPid":22010,"verifiedPeerProcStart":"183502","msg_id":"` + msgID + `"},"timestamp":"2026-11-30T19:57:47.922Z","isMeta":true},"type":"attachment","uuid":"25da16bc-69bc-44ae-9a16-a76a64e496a2","timestamp":"2026-11-30T19:57:47.922Z"}` + "\n"
}

// startedRow is the user row of a peer line that started a turn.
func startedRow(msgID string) string {
	return `{"type":"user","message":{"role":"user","content":"Another Claude session sent a message:\nhi"},"isMeta":true,"uuid":"81158413-5055-4045-8bca-281435bfcc59","timestamp":"2026-11-30T19:30:15.796Z","origin":{"kind":"peer","from":"omi","verifiedPeerPid":4256,"msg_id":"` + msgID + `"},"turnOrigin":"peer"}` + "\n"
}

// noiseRow is an ordinary row.
const noiseRow = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"working"}],"stop_reason":"tool_use"},"timestamp":"2026-11-30T19:57:47.876Z"}` + "\n"

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

type seenResult struct {
	ok  bool
	err error
	at  time.Duration
}

// waitSeen runs WaitSeen in the background and returns its result channel.
func waitSeen(ctx context.Context, path, msgID string, o transcript.SeenOptions) <-chan seenResult {
	ch := make(chan seenResult, 1)
	start := time.Now()
	go func() {
		ok, err := transcript.WaitSeen(ctx, path, msgID, o)
		ch <- seenResult{ok, err, time.Since(start)}
	}()
	return ch
}

// settle gives a started WaitSeen time to set up its watch, so a write
// made afterwards is a write it has to be woken for.
func settle() { time.Sleep(50 * time.Millisecond) }

// TestWaitSeen: each case writes a transcript while WaitSeen waits and
// checks what it returns. Poll is an hour wherever the row is expected, so
// only file events can have woken the wait.
func TestWaitSeen(t *testing.T) {
	const never = time.Hour
	// seenWait is the wait of a case whose row comes: it ends at the row,
	// so it costs nothing to make it long enough for a loaded machine.
	const seenWait = 60 * time.Second
	tests := []struct {
		name string
		// before is written before the wait; "-" leaves the file absent,
		// "--" the project directory too.
		before string
		// during writes while the wait runs.
		during func(t *testing.T, path, msgID string)
		wait   time.Duration
		want   bool
	}{
		{
			name:   "absorbed row appended later",
			before: noiseRow,
			during: func(t *testing.T, path, msgID string) {
				appendTo(t, path, noiseRow+absorbedRow(msgID)+noiseRow)
			},
			wait: seenWait, want: true,
		},
		{
			name:   "user row of a peer-started turn",
			before: noiseRow,
			during: func(t *testing.T, path, msgID string) { appendTo(t, path, startedRow(msgID)) },
			wait:   seenWait, want: true,
		},
		{
			name:   "another msg_id",
			before: noiseRow,
			during: func(t *testing.T, path, msgID string) { appendTo(t, path, absorbedRow(uuid.NewString())) },
			wait:   300 * time.Millisecond, want: false,
		},
		{
			name:   "the msg_id in text only",
			before: noiseRow,
			during: func(t *testing.T, path, msgID string) {
				appendTo(t, path, `{"type":"assistant","message":{"role":"assistant","content":"`+msgID+`"}}`+"\n")
				appendTo(t, path, `{"type":"queue-operation","operation":"enqueue","content":"`+msgID+`","origin":{"kind":"peer","msg_id":"`+msgID+`"}}`+"\n")
			},
			wait: 300 * time.Millisecond, want: false,
		},
		{
			name:   "a non-peer origin",
			before: noiseRow,
			during: func(t *testing.T, path, msgID string) {
				appendTo(t, path, `{"type":"user","message":{"role":"user","content":"x"},"origin":{"kind":"task-notification","msg_id":"`+msgID+`"}}`+"\n")
			},
			wait: 300 * time.Millisecond, want: false,
		},
		{
			name:   "file created after the wait began",
			before: "-",
			during: func(t *testing.T, path, msgID string) { appendTo(t, path, noiseRow+absorbedRow(msgID)) },
			wait:   seenWait, want: true,
		},
		{
			name:   "project directory created after the wait began",
			before: "--",
			during: func(t *testing.T, path, msgID string) {
				if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				settle()
				appendTo(t, path, startedRow(msgID))
			},
			wait: seenWait, want: true,
		},
		{
			name:   "torn last line, then completed",
			before: noiseRow,
			during: func(t *testing.T, path, msgID string) {
				row := absorbedRow(msgID)
				appendTo(t, path, row[:len(row)/2])
				settle()
				appendTo(t, path, row[len(row)/2:])
			},
			wait: seenWait, want: true,
		},
		{
			name:   "torn last line never completed",
			before: noiseRow,
			during: func(t *testing.T, path, msgID string) {
				row := absorbedRow(msgID)
				appendTo(t, path, row[:len(row)-1])
			},
			wait: 300 * time.Millisecond, want: false,
		},
		{
			name:   "file replaced by a shorter one",
			before: strings.Repeat(noiseRow, 10),
			during: func(t *testing.T, path, msgID string) {
				tmp := path + ".tmp"
				appendTo(t, tmp, absorbedRow(msgID))
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			},
			wait: seenWait, want: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "projects", "-home-u-proj", uuid.NewString()+transcriptfile.Ext)
			var from int64
			dir := filepath.Dir(path)
			if tt.before == "--" {
				dir = filepath.Dir(dir) // the projects directory only
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.before != "-" && tt.before != "--" {
				appendTo(t, path, tt.before)
				from = int64(len(tt.before))
			}
			msgID := uuid.NewString()
			poll := never
			if !tt.want {
				poll = 50 * time.Millisecond // the fallback timer must not find it either
			}
			ch := waitSeen(context.Background(), path, msgID, transcript.SeenOptions{From: from, Wait: tt.wait, Poll: poll})
			settle()
			written := time.Now()
			tt.during(t, path, msgID)
			r := <-ch
			if r.err != nil {
				t.Fatalf("WaitSeen: %v", r.err)
			}
			if r.ok != tt.want {
				t.Fatalf("WaitSeen = %v, want %v", r.ok, tt.want)
			}
			if tt.want {
				// Poll is an hour: a wait that ended true was woken by the
				// file event (milliseconds on an idle machine). The figure
				// is logged, not bounded: on a loaded machine it only
				// measures the load.
				t.Logf("seen %v after the row was written", time.Since(written))
			} else if r.at < tt.wait {
				t.Errorf("gave up after %v, before the wait of %v", r.at, tt.wait)
			}
		})
	}
}

// A row already in the transcript before From, or one straddling From, is
// not the proof of this send.
func TestWaitSeenOnlyAfterFrom(t *testing.T) {
	msgID := uuid.NewString()
	row := absorbedRow(msgID)
	tests := []struct {
		name string
		from int64
		want bool
	}{
		{"from the start", 0, true},
		{"from the row's start", int64(len(noiseRow)), true},
		{"from inside the row", int64(len(noiseRow) + 10), false},
		{"from after the row", int64(len(noiseRow) + len(row)), false},
	}
	path := filepath.Join(t.TempDir(), uuid.NewString()+transcriptfile.Ext)
	appendTo(t, path, noiseRow+row+noiseRow)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := transcript.WaitSeen(context.Background(), path, msgID, transcript.SeenOptions{From: tt.from})
			if err != nil || ok != tt.want {
				t.Errorf("WaitSeen from %d = %v, %v; want %v, nil", tt.from, ok, err, tt.want)
			}
		})
	}
}

func TestWaitSeenCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), uuid.NewString()+transcriptfile.Ext)
	appendTo(t, path, noiseRow)
	ctx, cancel := context.WithCancel(context.Background())
	ch := waitSeen(ctx, path, uuid.NewString(), transcript.SeenOptions{From: int64(len(noiseRow)), Wait: time.Minute})
	settle()
	cancel()
	select {
	case r := <-ch:
		if r.ok || !errors.Is(r.err, context.Canceled) {
			t.Errorf("WaitSeen after cancel = %v, %v; want false, context.Canceled", r.ok, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitSeen did not return after its context was cancelled")
	}
}

func TestWaitSeenErrors(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.jsonl")
	appendTo(t, target, absorbedRow("6c6c667d-dc66-465b-8e42-2811789dfb0b"))
	link := filepath.Join(dir, uuid.NewString()+transcriptfile.Ext)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, msgID string
		want              error
	}{
		{"bad msg_id", target, "not-a-uuid", transcript.ErrBadMsgID},
		{"symlink", link, "6c6c667d-dc66-465b-8e42-2811789dfb0b", transcript.ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := transcript.WaitSeen(context.Background(), tt.path, tt.msgID, transcript.SeenOptions{Wait: time.Minute})
			if ok || !errors.Is(err, tt.want) {
				t.Errorf("WaitSeen = %v, %v; want false, %v", ok, err, tt.want)
			}
			var te *fs.PathError
			if !errors.As(err, &te) || te.Path != tt.path {
				t.Errorf("error %v is not an *fs.PathError for %s", err, tt.path)
			}
		})
	}
}

// mark is what Witness.Mark returns.
type mark struct {
	Path string
	Size int64
}

func TestWitnessMark(t *testing.T) {
	projects := t.TempDir()
	cwd := "/home/u/proj"
	sid, fresh := uuid.NewString(), uuid.NewString()
	existing := filepath.Join(projects, transcriptfile.EncodeProjectDir(cwd), sid+transcriptfile.Ext)
	if err := os.MkdirAll(filepath.Dir(existing), 0o700); err != nil {
		t.Fatal(err)
	}
	appendTo(t, existing, noiseRow)
	tests := []struct {
		name, sid, cwd string
		want           mark
		err            error
	}{
		{"existing transcript", sid, cwd, mark{Path: existing, Size: int64(len(noiseRow))}, nil},
		{"existing, found without a cwd", sid, "", mark{Path: existing, Size: int64(len(noiseRow))}, nil},
		{"not yet written", fresh, "/srv/new", mark{Path: filepath.Join(projects, "-srv-new", fresh+transcriptfile.Ext)}, nil},
		{"not yet written, no cwd", fresh, "", mark{}, transcript.ErrNotFound},
		{"bad session id", "../x", cwd, mark{}, transcript.ErrBadSessionID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got mark
			var err error
			got.Path, got.Size, err = transcript.Witness{ProjectsDir: projects}.Mark(tt.sid, tt.cwd)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Mark (-want +got):\n%s", diff)
			}
		})
	}
}

// The Witness is Mark then WaitSeen: what a Sender does around one send.
func TestWitness(t *testing.T) {
	projects := t.TempDir()
	sid, msgID := uuid.NewString(), uuid.NewString()
	w := transcript.Witness{ProjectsDir: projects, Poll: time.Hour}
	path, size, err := w.Mark(sid, "/home/u/proj")
	if err != nil || size != 0 {
		t.Fatalf("Mark = %s, %d, %v", path, size, err)
	}
	done := make(chan error, 1)
	go func() {
		settle()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			done <- err
			return
		}
		settle()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err == nil {
			_, err = f.WriteString(noiseRow + absorbedRow(msgID))
			f.Close()
		}
		done <- err
	}()
	ok, err := w.WaitSeen(context.Background(), path, size, msgID, 10*time.Second)
	if werr := <-done; werr != nil {
		t.Fatal(werr)
	}
	if !ok || err != nil {
		t.Errorf("WaitSeen = %v, %v; want true, nil", ok, err)
	}
}

func ExampleWaitSeen() {
	dir, _ := os.MkdirTemp("", "seen")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "-home-u-proj", "6f4333bb-8aef-4dfe-81b7-7feca9be5559.jsonl")
	os.Mkdir(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(noiseRow), 0o600)

	// Before the send: where the transcript ends.
	w := transcript.Witness{ProjectsDir: dir}
	path, from, _ := w.Mark("6f4333bb-8aef-4dfe-81b7-7feca9be5559", "/home/u/proj")
	// The session absorbs the line (here: written by hand).
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(absorbedRow("6c6c667d-dc66-465b-8e42-2811789dfb0b"))
	f.Close()
	// After the ack: wait for the row with the ack's msg_id.
	ok, err := transcript.WaitSeen(context.Background(), path, "6c6c667d-dc66-465b-8e42-2811789dfb0b",
		transcript.SeenOptions{From: from, Wait: 5 * time.Second})
	fmt.Println(ok, err)
	// Output:
	// true <nil>
}

// TestSeenWithoutFileEvents: a seen wait whose file watch could not be set
// up (no inotify instance left for the user, fs.inotify.max_user_instances;
// here the process's descriptor limit, which fails inotify_init1 with the
// same EMFILE) still ends at the row, by its fallback poll (a tenth of
// Poll: 100 ms), not at the end of its wait. It drives the Follower that
// WaitSeen runs, so the test can tell that its wake-up polls. Not
// parallel: it lowers the process's descriptor limit for a moment.
func TestSeenWithoutFileEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), uuid.NewString()+transcriptfile.Ext)
	appendTo(t, path, noiseRow)
	// The session's descriptor, opened while there are free ones.
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f := transcript.Follow(context.Background(), path, int64(len(noiseRow)), transcript.FollowOptions{Poll: time.Second})
	defer f.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Next(done); !errors.Is(err, context.Canceled) { // opens the transcript, arms nothing
		t.Fatalf("Next = %v, want Canceled", err)
	}
	restore := hostile.NoFreeFD(t)
	for armed := false; !armed; { // a Next that got to its wait armed the wake-up
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := f.Next(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			restore()
			t.Fatalf("Next = %v, want DeadlineExceeded", err)
		}
		armed, _ = transcript.FollowerWaker(f)
	}
	restore()
	if _, polling := transcript.FollowerWaker(f); !polling {
		t.Fatal("the Follower set up a file watch with no descriptor free: the test's seam did not work")
	}
	msgID := uuid.NewString()
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		l, err := f.Next(ctx)
		if err == nil && !strings.Contains(string(l.Raw), msgID) {
			err = fmt.Errorf("row %q, want the one with the msg_id", l.Raw)
		}
		got <- err
	}()
	blockedInNext(t) // so only the poll can wake it for the row
	written := time.Now()
	if _, err := w.WriteString(absorbedRow(msgID)); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Next without file events: %v", err)
	}
	// 50 ms on average on an idle machine. A wait that only a file event
	// could end reads the row when its minute runs out: the bound tells
	// the two apart, generously for a loaded machine.
	lat := time.Since(written)
	t.Logf("the row was read %v after it was written, by the 100 ms fallback poll", lat)
	if lat > 30*time.Second {
		t.Errorf("the row was read %v after it was written: the wait's end, not its fallback poll, ended it", lat)
	}
}

// blockedInNext waits until a goroutine of this process is parked in a
// Follower's wait (the select of Next), as its stack shows.
func blockedInNext(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(time.Minute); ; {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, " [select") && strings.Contains(g, "transcript.(*Follower).Next(") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no goroutine waits in Follower.Next")
		}
		time.Sleep(time.Millisecond)
	}
}
