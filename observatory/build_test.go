package observatory_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	sidA  = "aaaaaaaa-0000-4000-8000-000000000001"
	sidB  = "aaaaaaaa-0000-4000-8000-000000000002"
	sidC  = "aaaaaaaa-0000-4000-8000-000000000003"
	sidD  = "aaaaaaaa-0000-4000-8000-000000000004"
	sidE  = "aaaaaaaa-0000-4000-8000-000000000005"
	hostA = "local_0a0a0a0a-1111"
)

// synthetic lays out a station:
//
//   - A (pid 1001, desktop, /home/u/proj): riders a1 riding, a2 finished,
//     a3 stale, workflows/run1/a4 riding; inbox of 3 lines + 1 blank,
//     offset after the first, one ack, a fresh following doorman (pid 2001);
//   - B (pid 1002, idle): child of A by A's host id only; a monitor-era
//     inbox (3 lines, 2 monitor-era acks, no offset, no heartbeat);
//   - C: a stale row (pid 1003 runs with another procStart); its inbox holds
//     2 lines, 1 beyond the offset of a stopped doorman (pid 2003, gone);
//   - D: an inbox only, everything delivered (offset at the end);
//   - E: a row whose pid does not run at all.
func synthetic(t *testing.T) (*fakestation.Station, *station.Station) {
	t.Helper()
	fs := fakestation.New(t)
	proc := newFakeProc(t)
	for _, pid := range []int{1001, 1002, 2001} {
		proc.run(t, pid, strconv.Itoa(pid*10))
	}
	proc.run(t, 1003, "1")

	a := row(1001, sidA, "work-e9", "/home/u/proj", testNow.Add(-time.Hour))
	a.HostSessionID = hostA
	a.Entrypoint = "claude-desktop"
	fs.WriteRow(a)
	b := row(1002, sidB, "other-01", "/home/u/other", testNow.Add(-30*time.Minute))
	b.Status = station.StatusIdle
	fs.WriteRow(b)
	fs.WriteRow(row(1003, sidC, "gone-03", "/home/u/gone", testNow.Add(-2*time.Hour)))
	fs.WriteRow(row(1005, sidE, "dead-05", "/home/u/dead", testNow.Add(-3*time.Hour)))

	dirA := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir("/home/u/proj"), sidA)
	addRider(t, dirA, "", "a1", riderWorking, testNow.Add(-10*time.Second))
	addRider(t, dirA, "", "a2", riderDone, testNow.Add(-20*time.Second))
	addRider(t, dirA, "", "a3", riderWorking, testNow.Add(-20*time.Minute))
	addRider(t, dirA, "workflows/run1", "a4", riderWorking, testNow.Add(-5*time.Second))

	in := fs.Paths.InboxDir
	fa := inboxv1.FilesFor(in, sidA)
	writeFile(t, fa.Inbox, "[mama 📡] one\n[mama 📡] two\n\n[luna 📡] three\n", time.Time{})
	writeFile(t, fa.Offset, "16\n", time.Time{})
	writeFile(t, fa.Ack, `{"ts":"2026-11-30T11:59:00.000Z","sha256":"x","session_id":"`+sidA+`","peer_status":"busy","class":"delivered-steer","msg_id":"m"}`+"\n", time.Time{})
	writeHeartbeat(t, in, sidA, inboxv1.Heartbeat{
		PID: 2001, SessionID: sidA, Since: "2026-11-30T11:00:00.000Z", LastSeen: "2026-11-30T11:59:58.000Z",
		Delivered: 1, Offset: 16, State: inboxv1.StateFollowing, Mode: "mcp", Version: "0.2.0-dev",
	})

	fb := inboxv1.FilesFor(in, sidB)
	writeFile(t, fb.Inbox, "[x 📡] a\n[x 📡] b\n[x 📡] c\n", time.Time{})
	writeFile(t, fb.Ack, "2026-10-30T20:00:00 read: [x 📡] a\n2026-10-30T20:00:01 read: [x 📡] b\n", time.Time{})

	fc := inboxv1.FilesFor(in, sidC)
	writeFile(t, fc.Inbox, "[x 📡] first\n[x 📡] second\n", time.Time{})
	writeHeartbeat(t, in, sidC, inboxv1.Heartbeat{
		PID: 2003, SessionID: sidC, Since: "2026-11-30T09:00:00.000Z", LastSeen: "2026-11-30T10:00:00.000Z",
		Delivered: 1, Offset: 15, State: inboxv1.StateStopped, Mode: "mcp", Version: "0.2.0-dev",
	})

	fd := inboxv1.FilesFor(in, sidD)
	writeFile(t, fd.Inbox, "[x 📡] done\n", time.Time{})
	writeFile(t, fd.Offset, "14", time.Time{})

	writeFile(t, fs.Paths.LineageFile(),
		`{"ts":"2026-11-30T11:40:00.000Z","child_host":null,"child_session":"`+sidB+`","parent_host":"`+hostA+`","parent_session":null,"title":"helper","by":"child"}`+"\n"+
			"not json\n", time.Time{})

	st := &station.Station{Paths: fs.Paths, Proc: station.Proc{Root: proc.root}, Now: func() time.Time { return testNow }}
	return fs, st
}

func ptr[T any](v T) *T { return &v }

// riderView is the part of a rider the observatory decides (the rest is
// the transcript package's, tested there).
type riderView struct {
	Agent, State, Reason, Description, Path string
}

func viewRiders(rs []transcript.Rider) []riderView {
	out := []riderView{}
	for _, r := range rs {
		out = append(out, riderView{r.Agent, string(r.State), r.StateReason, r.Description, r.Path})
	}
	return out
}

func TestBuild(t *testing.T) {
	fs, st := synthetic(t)
	dirA := filepath.Join(fs.Paths.ProjectsDir, "-home-u-proj", sidA, "subagents")
	in := fs.Paths.InboxDir

	tests := []struct {
		name       string
		all        bool
		wantRiders []riderView
	}{
		{"riding only", false, []riderView{
			{"a1", "riding", "", "task a1", filepath.Join(dirA, "agent-a1.jsonl")},
			{"a4", "riding", "", "task a4", filepath.Join(dirA, "workflows/run1/agent-a4.jsonl")},
		}},
		{"all", true, []riderView{
			{"a3", "quiet/finished", "stale", "task a3", filepath.Join(dirA, "agent-a3.jsonl")},
			{"a2", "quiet/finished", "final-text", "task a2", filepath.Join(dirA, "agent-a2.jsonl")},
			{"a1", "riding", "", "task a1", filepath.Join(dirA, "agent-a1.jsonl")},
			{"a4", "riding", "", "task a4", filepath.Join(dirA, "workflows/run1/agent-a4.jsonl")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := observatory.Build(context.Background(), observatory.Options{
				Station: st, IncludeFinished: tt.all, RidingWindow: 600 * time.Second,
				Hostname: func() (string, error) { return "box", nil }, Generator: "oo-claude test",
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantRiders, viewRiders(doc.Sessions[0].Riders)); diff != "" {
				t.Errorf("riders of A (-want +got):\n%s", diff)
			}
			for i := range doc.Sessions {
				doc.Sessions[i].Riders = nil
			}
			want := &observatory.Document{
				Schema: "oo-claude/sessions/v0", GeneratedAt: "2026-11-30T12:00:00.000Z", Station: "box",
				Generator: "oo-claude test", RidingWindowS: 600, IncludeFinished: tt.all, Warnings: []string{}, Starts: []observatory.Start{},
				Sessions: []observatory.Session{
					{
						Session: sidA, Name: "work-e9", PID: 1001, Status: "busy", CWD: "/home/u/proj", Version: "2.1.332",
						StartedMS: testNow.Add(-time.Hour).UnixMilli(),
						Inbox: inboxv1.Inbox{
							Path: filepath.Join(in, sidA+".inbox"), Exists: true, Lines: 3, Acks: 1, Pending: 2,
							Doorman: &inboxv1.Doorman{
								PID: 2001, LastSeenS: ptr(2.0), Fresh: true, Delivered: 1, State: "following", PIDAlive: true,
								Since: "2026-11-30T11:00:00.000Z", LastSeen: "2026-11-30T11:59:58.000Z", Mode: "mcp", Version: "0.2.0-dev",
							},
							LastLine: "[luna 📡] three", Offset: ptr(int64(16)), PendingBytes: ptr(int64(51 - 16)), PendingSource: "offset",
						},
						HostSession: hostA, Children: []string{sidB}, Since: "2026-11-30T11:00:00.000Z",
						Kind: "interactive", Entrypoint: "claude-desktop", RidersRiding: 2, RidersTotal: 4,
						StatusUpdatedMS: testNow.Add(-time.Hour).UnixMilli() + 5, Station: "box",
					},
					{
						Session: sidB, Name: "other-01", PID: 1002, Status: "idle", CWD: "/home/u/other", Version: "2.1.332",
						StartedMS: testNow.Add(-30 * time.Minute).UnixMilli(),
						Inbox: inboxv1.Inbox{
							Path: filepath.Join(in, sidB+".inbox"), Exists: true, Lines: 3, Acks: 2, Pending: 1,
							LastLine: "[x 📡] c", PendingSource: "lines-acks",
						},
						ParentHost: hostA, ParentSession: sidA, Children: []string{}, Since: "2026-11-30T11:30:00.000Z",
						Kind: "interactive", Entrypoint: "sdk-cli", RidersRiding: 0, RidersTotal: 0,
						StatusUpdatedMS: testNow.Add(-30*time.Minute).UnixMilli() + 5, Station: "box",
					},
				},
				OfflineInboxes: []observatory.OfflineInbox{{
					Session: sidC, Pending: 1, Lines: 2, LastLine: "[x 📡] second", Path: filepath.Join(in, sidC+".inbox"),
					Doorman: &inboxv1.Doorman{
						PID: 2003, LastSeenS: ptr(7200.0), Delivered: 1, State: "stopped", Since: "2026-11-30T09:00:00.000Z",
						LastSeen: "2026-11-30T10:00:00.000Z", Mode: "mcp", Version: "0.2.0-dev", NotFreshBecause: "stale",
					},
				}},
			}
			if diff := cmp.Diff(want, doc); diff != "" {
				t.Errorf("document (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildOnly(t *testing.T) {
	fs, st := synthetic(t)
	tests := []struct {
		name       string
		only       string
		wantStatus string
		wantPID    int
		wantRiders int
		wantCWD    string
	}{
		{"running target", sidA, "busy", 1001, 4, "/home/u/proj"},
		{"offline target with a transcript", sidC, "offline", 0, 1, "/home/u/gone"},
		{"offline target without anything", "bbbbbbbb-0000-4000-8000-000000000009", "offline", 0, 0, ""},
	}
	// C's transcript and one finished rider, in C's project directory.
	dirC := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir("/home/u/gone"), sidC)
	writeFile(t, dirC+".jsonl", jsonLine(t, map[string]any{"type": "user", "cwd": "/home/u/gone", "sessionId": sidC,
		"timestamp": "2026-11-30T10:00:00Z", "message": map[string]any{"role": "user", "content": "hi"}}), time.Time{})
	addRider(t, dirC, "", "c1", riderDone, testNow.Add(-time.Hour))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := observatory.Build(context.Background(), observatory.Options{Station: st, Only: tt.only, IncludeFinished: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Sessions) != 1 {
				t.Fatalf("%d sessions, want 1", len(doc.Sessions))
			}
			s := doc.Sessions[0]
			got := []any{s.Session, s.Status, s.PID, len(s.Riders), s.CWD, len(doc.OfflineInboxes)}
			want := []any{tt.only, tt.wantStatus, tt.wantPID, tt.wantRiders, tt.wantCWD, 0}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("session, status, pid, riders, cwd, offline inboxes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := observatory.Build(context.Background(), observatory.Options{}); !errors.Is(err, claudeinbox.ErrNoStation) {
		t.Errorf("no station: %v, want claudeinbox.ErrNoStation", err)
	}
	fs := fakestation.New(t)
	// A registry that is a file cannot be listed.
	p := fs.Paths
	p.SessionsDir = filepath.Join(fs.Root, "registry-file")
	writeFile(t, p.SessionsDir, "x", time.Time{})
	_, err := observatory.Build(context.Background(), observatory.Options{Station: station.New(p)})
	var oe *os.PathError // fs.PathError
	if !errors.As(err, &oe) || oe.Op != "observatory read registry" || oe.Path != p.SessionsDir {
		t.Errorf("unreadable registry: %v, want an *fs.PathError observatory read registry %s", err, p.SessionsDir)
	}
	// A missing registry is an empty station.
	p.SessionsDir = filepath.Join(fs.Root, "none")
	doc, err := observatory.Build(context.Background(), observatory.Options{Station: station.New(p)})
	if err != nil || len(doc.Sessions) != 0 {
		t.Errorf("missing registry: %v, %d sessions; want none and no error", err, len(doc.Sessions))
	}
	// The library knows no version: the caller gives it in Generator.
	if err == nil && doc.Generator != "oo-claude" {
		t.Errorf("generator without Options.Generator = %q, want \"oo-claude\"", doc.Generator)
	}
}

func TestBuildWarnsAboutUnreadableParts(t *testing.T) {
	_, st := synthetic(t)
	// An unreadable ledger (a directory in its place) is a warning, not a failure.
	os.Remove(st.Paths.LineageFile())
	if err := os.Mkdir(st.Paths.LineageFile(), 0o700); err != nil {
		t.Fatal(err)
	}
	doc, err := observatory.Build(context.Background(), observatory.Options{Station: st})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "lineage") {
		t.Errorf("warnings %q, want one about the lineage ledger", doc.Warnings)
	}
	if len(doc.Sessions) != 2 || doc.Sessions[1].ParentSession != "" {
		t.Errorf("sessions without lineage: %+v", doc.Sessions)
	}
}

// countdownCtx is a context whose Err turns to Canceled after n calls:
// it ends while Build reads, at a point no timing moves.
type countdownCtx struct {
	context.Context
	n atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestBuildEndsWithCtx: a context that ends while Build reads the
// sessions is Build's error, the document left unmade; one that ends
// after every session was read is not.
func TestBuildEndsWithCtx(t *testing.T) {
	st := bigStation(t, 20, 1, 1)
	ctx := &countdownCtx{Context: context.Background()}
	ctx.n.Store(3) // Build's first look, then two sessions taken
	if doc, err := observatory.Build(ctx, observatory.Options{Station: st}); !errors.Is(err, context.Canceled) || doc != nil {
		t.Errorf("Build = %v, %v; want nil, context.Canceled", doc, err)
	}
	ctx.n.Store(1 + 20 + 8) // every session, and each worker's last look (at most 8 workers)
	if doc, err := observatory.Build(ctx, observatory.Options{Station: st}); err != nil || len(doc.Sessions) != 20 {
		t.Errorf("Build after every session: %v; want 20 sessions", err)
	}
}
