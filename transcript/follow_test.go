package transcript_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/transcript"
)

// next calls f.Next with a bound, failing the test on a hang.
func next(t *testing.T, f *transcript.Follower, d time.Duration) (transcript.Line, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return f.Next(ctx)
}

// drain returns every row already written (Next with a done context).
func drain(f *transcript.Follower) ([]string, []error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var rows []string
	var errs []error
	for {
		l, err := f.Next(ctx)
		if errors.Is(err, context.Canceled) {
			return rows, errs
		}
		if err != nil {
			errs = append(errs, err)
			if len(errs) > 10 {
				return rows, errs
			}
			continue
		}
		rows = append(rows, string(l.Raw))
	}
}

// TestFollow: each case prepares a transcript, starts a Follower, then
// writes while it waits. Poll is an hour, so only file events can wake it.
func TestFollow(t *testing.T) {
	tests := []struct {
		name string
		// before is written before Follow; "-" leaves the file absent,
		// "--" the project directory too.
		before string
		from   int64
		// during runs after the Follower started waiting.
		during func(t *testing.T, path string)
		want   []string
		errs   []error // the errors Next reports along the way, in order
	}{
		{
			name: "rows appended later, in order", before: "a\n", from: 2,
			during: func(t *testing.T, p string) { appendTo(t, p, "b\n"); appendTo(t, p, "c\r\n\nd\n") },
			want:   []string{"b", "c", "d"},
		},
		{
			name: "rows before from are not handed over", before: "a\nb\n", from: 4,
			during: func(t *testing.T, p string) { appendTo(t, p, "c\n") },
			want:   []string{"c"},
		},
		{
			name: "a row straddling from is left out", before: "a\nbb", from: 3,
			during: func(t *testing.T, p string) { appendTo(t, p, "b\nc\n") },
			want:   []string{"c"},
		},
		{
			name: "a torn row is held until its newline", before: "",
			during: func(t *testing.T, p string) {
				appendTo(t, p, `{"type":"us`)
				time.Sleep(100 * time.Millisecond)
				appendTo(t, p, `er"}`+"\n")
			},
			want: []string{`{"type":"user"}`},
		},
		{
			name: "file created later", before: "-",
			during: func(t *testing.T, p string) { appendTo(t, p, "a\nb\n") },
			want:   []string{"a", "b"},
		},
		{
			name: "project directory created later", before: "--",
			during: func(t *testing.T, p string) {
				if err := os.Mkdir(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
				appendTo(t, p, "a\n")
			},
			want: []string{"a"},
		},
		{
			name: "truncated", before: "a\nb\n", from: 4,
			during: func(t *testing.T, p string) {
				if err := os.Truncate(p, 0); err != nil {
					t.Fatal(err)
				}
				appendTo(t, p, "x\n")
			},
			want: []string{"x"}, errs: []error{transcript.ErrTruncated},
		},
		{
			name: "shorter than from when first opened", before: "a\n", from: 50,
			during: func(t *testing.T, p string) { appendTo(t, p, "b\n") },
			want:   []string{"a", "b"}, errs: []error{transcript.ErrTruncated},
		},
		{
			name: "replaced by a rename", before: "a\n", from: 2,
			during: func(t *testing.T, p string) {
				tmp := p + ".tmp"
				if err := os.WriteFile(tmp, []byte("new1\nnew2\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, p); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"new1", "new2"}, errs: []error{transcript.ErrReplaced},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "-home-u-proj", uuid.NewString()+transcriptfile.Ext)
			if tt.before != "--" {
				if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if tt.before != "-" {
					appendTo(t, path, tt.before)
				}
			}
			f := transcript.Follow(context.Background(), path, tt.from, transcript.FollowOptions{Poll: time.Hour})
			defer f.Close()
			done := make(chan struct{})
			go func() {
				defer close(done)
				settle()
				tt.during(t, path)
			}()
			var got []string
			var errs []error
			for len(got) < len(tt.want) {
				l, err := next(t, f, 60*time.Second)
				if err != nil {
					if errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("Next hung after %q", got)
					}
					errs = append(errs, err)
					if len(errs) > 5 {
						t.Fatalf("errors %v", errs)
					}
					continue
				}
				if l.End <= l.Offset || l.Offset < tt.from && len(errs) == 0 {
					t.Errorf("row %q at [%d,%d): bad offsets (from %d)", l.Raw, l.Offset, l.End, tt.from)
				}
				got = append(got, string(l.Raw))
			}
			<-done
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors %v, want %v", errs, tt.errs)
			}
			for i := range errs {
				if !errors.Is(errs[i], tt.errs[i]) {
					t.Errorf("error %d = %v, want %v", i, errs[i], tt.errs[i])
				}
				var te *fs.PathError
				if !errors.As(errs[i], &te) || te.Path != path {
					t.Errorf("error %v is not an *fs.PathError for the path", errs[i])
				}
			}
			// Nothing more is handed over.
			if l, err := next(t, f, 50*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("extra Next = %q, %v", l.Raw, err)
			}
		})
	}
}

// The offsets a Follower reports are the rows' places in the file.
func TestFollowOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), uuid.NewString()+transcriptfile.Ext)
	content := "first\nsecond row\r\n\nthird\n"
	appendTo(t, path, content)
	f := transcript.Follow(context.Background(), path, 0, transcript.FollowOptions{})
	defer f.Close()
	type span struct {
		Raw         string
		Offset, End int64
	}
	var got []span
	for range 3 {
		l, err := next(t, f, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, span{string(l.Raw), l.Offset, l.End})
	}
	want := []span{{"first", 0, 6}, {"second row", 6, 18}, {"third", 19, 25}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if f.Offset() != int64(len(content)) {
		t.Errorf("Offset = %d, want %d", f.Offset(), len(content))
	}
}

func TestFollowNotRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.jsonl")
	appendTo(t, target, "secret\n")
	link := filepath.Join(dir, uuid.NewString()+transcriptfile.Ext)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, uuid.NewString()+transcriptfile.Ext)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, p := range []string{link, fifo} {
		f := transcript.Follow(context.Background(), p, 0, transcript.FollowOptions{})
		l, err := next(t, f, 5*time.Second)
		if !errors.Is(err, transcript.ErrNotRegular) {
			t.Errorf("Next on %s = %q, %v; want ErrNotRegular", filepath.Base(p), l.Raw, err)
		}
		// The error ends the Follower.
		if _, err2 := next(t, f, time.Second); !errors.Is(err2, transcript.ErrNotRegular) {
			t.Errorf("second Next = %v; want the same error", err2)
		}
		f.Close()
	}
}

func TestFollowRowTooLong(t *testing.T) {
	path := filepath.Join(t.TempDir(), uuid.NewString()+transcriptfile.Ext)
	appendTo(t, path, "ok\n"+strings.Repeat("x", 300<<10)+"\nafter\n")
	f := transcript.FollowMaxRow(context.Background(), path, 0, transcript.FollowOptions{}, 100<<10)
	defer f.Close()
	rows, errs := drain(f)
	if diff := cmp.Diff([]string{"ok", "after"}, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if len(errs) != 1 || !errors.Is(errs[0], transcript.ErrRowTooLong) {
		t.Errorf("errors %v, want one ErrRowTooLong", errs)
	}
}

// Next honours both contexts and Close.
func TestFollowEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), uuid.NewString()+transcriptfile.Ext)
	appendTo(t, path, "a\n")
	t.Run("Next's context", func(t *testing.T) {
		f := transcript.Follow(context.Background(), path, 2, transcript.FollowOptions{Poll: time.Hour})
		defer f.Close()
		start := time.Now()
		if _, err := next(t, f, 100*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Next = %v, want DeadlineExceeded", err)
		}
		// 100 ms on an idle machine; the bound only tells the context
		// from the hour's poll, so it is generous for a loaded one.
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("Next returned after %s", d)
		}
	})
	t.Run("Follow's context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		f := transcript.Follow(ctx, path, 2, transcript.FollowOptions{Poll: time.Hour})
		defer f.Close()
		go func() { settle(); cancel() }()
		if _, err := next(t, f, 10*time.Second); !errors.Is(err, context.Canceled) {
			t.Errorf("Next = %v, want Canceled", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		f := transcript.Follow(context.Background(), path, 0, transcript.FollowOptions{})
		f.Close()
		if err := f.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
		if _, err := next(t, f, time.Second); !errors.Is(err, os.ErrClosed) {
			t.Errorf("Next after Close = %v, want os.ErrClosed", err)
		}
	})
}

// TestFollowerDrop: Drop releases a Follower whose watch is armed without
// Close's wait for the kernel (no Waker closed with Close), closes its
// file, and leaves it closed: Next returns os.ErrClosed, a second Drop and
// a Close after it are no-ops. Not parallel: it counts the process's
// Close calls.
func TestFollowerDrop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := transcript.Follow(context.Background(), path, 0, transcript.FollowOptions{Poll: time.Hour})
	if _, err := next(t, f, time.Second); err != nil {
		t.Fatalf("first row: %v", err)
	}
	// Nothing more: Next arms the watch and waits for its deadline.
	if _, err := next(t, f, 50*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %v, want DeadlineExceeded", err)
	}
	closes := fsx.WaitedCloses()
	if err := f.Drop(); err != nil {
		t.Fatalf("Drop = %v", err)
	}
	if got := fsx.WaitedCloses() - closes; got != 0 {
		t.Errorf("Drop closed %d Wakers with Close, want 0", got)
	}
	if err := f.Drop(); err != nil {
		t.Errorf("second Drop = %v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close after Drop = %v", err)
	}
	if got := fsx.WaitedCloses() - closes; got != 0 {
		t.Errorf("Close after Drop closed %d Wakers, want 0", got)
	}
	if _, err := next(t, f, time.Second); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Next after Drop = %v, want os.ErrClosed", err)
	}
}

// TestWaitsDropTheirWatch: WaitSeen and WaitReply that had to wait (their
// Follower armed its file watch) let the watch go as they return instead
// of waiting for the kernel to retire it (a Close: 5.7 ms at the median,
// up to 19 ms, on a quiet machine), so the answer reaches the caller at
// once. Not parallel: it counts the process's Close calls.
func TestWaitsDropTheirWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	msgID := uuid.NewString()
	for _, w := range []struct {
		name string
		wait func() error
	}{
		{"WaitSeen", func() error {
			seen, err := transcript.WaitSeen(context.Background(), path, msgID, transcript.SeenOptions{Wait: 50 * time.Millisecond, Poll: time.Hour})
			if seen || err != nil {
				return fmt.Errorf("seen %v, %v; want false, nil", seen, err)
			}
			return nil
		}},
		{"WaitReply", func() error {
			if _, err := transcript.WaitReply(context.Background(), path, msgID, transcript.ReplyOptions{Wait: 50 * time.Millisecond, Poll: time.Hour}); !errors.Is(err, transcript.ErrNotSeen) {
				return fmt.Errorf("%v, want ErrNotSeen", err)
			}
			return nil
		}},
	} {
		closes := fsx.WaitedCloses()
		if err := w.wait(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if got := fsx.WaitedCloses() - closes; got != 0 {
			t.Errorf("%s closed %d Wakers with Close, want 0: it drops its watch", w.name, got)
		}
	}
}

// FuzzFollow writes content in the chunks the fuzzer picks, drains the
// Follower after each, and holds the rows it handed over to the complete
// lines of the content: none lost, none doubled, none torn.
func FuzzFollow(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte{1, 3})
	f.Add([]byte("{\"type\":\"user\"}\r\n\n\nx"), []byte{5, 0, 200})
	f.Add([]byte("\n\n\n"), []byte{})
	f.Fuzz(func(t *testing.T, content, cuts []byte) {
		if len(content) > 1<<16 {
			return
		}
		path := filepath.Join(t.TempDir(), "t"+transcriptfile.Ext)
		fl := transcript.Follow(context.Background(), path, 0, transcript.FollowOptions{Poll: time.Hour})
		defer fl.Close()
		var got []string
		rest := content
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if i < len(cuts) {
				n = min(int(cuts[i])+1, len(rest))
			}
			fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			fh.Write(rest[:n])
			fh.Close()
			rest = rest[n:]
			rows, errs := drain(fl)
			if len(errs) > 0 {
				t.Fatalf("errors %v", errs)
			}
			got = append(got, rows...)
		}
		var want []string
		lines := bytes.Split(content, []byte("\n"))
		for _, l := range lines[:len(lines)-1] {
			if l = bytes.TrimSuffix(l, []byte("\r")); len(l) > 0 {
				want = append(want, string(l))
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
	})
}

func ExampleFollow() {
	dir, _ := os.MkdirTemp("", "follow")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "6f4333bb-8aef-4dfe-81b7-7feca9be5559.jsonl")
	os.WriteFile(path, []byte(noiseRow), 0o600)

	// Mark the end, then hand over each row appended after it.
	f := transcript.Follow(context.Background(), path, int64(len(noiseRow)), transcript.FollowOptions{})
	defer f.Close()
	fh, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	fh.WriteString(`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-12-01T09:00:00.000Z","content":"hi"}` + "\n")
	fh.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := f.Next(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	var row struct {
		Type string `json:"type"`
	}
	json.Unmarshal(l.Raw, &row) // a row is one JSON object
	fmt.Println(row.Type, l.Offset == int64(len(noiseRow)))
	// Output:
	// queue-operation true
}

// A zero Follower, not made by Follow, and a nil one follow nothing: Next
// is an error, never a panic or a wait (the type's doc says so).
func TestZeroFollower(t *testing.T) {
	for name, f := range map[string]*transcript.Follower{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			// No path to name: a plain error saying where, not an *fs.PathError.
			if _, err := f.Next(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "transcript follow: ") {
				t.Errorf("Next = %v, want a transcript follow error", err)
			}
			if f.Offset() != 0 || f.Close() != nil || f.Drop() != nil {
				t.Errorf("Offset %d, Close %v, Drop %v", f.Offset(), f.Close(), f.Drop())
			}
		})
	}
}
