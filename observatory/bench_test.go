package observatory_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// bigStation lays out n live sessions (a fake /proc) with riders riders
// each, of which the first recent changed within the riding window (half of
// those riding, half finished) and the others an hour ago; an inbox of 20 lines with an offset and
// a fresh heartbeat, and a lineage ledger linking every tenth session to the
// first.
func bigStation(tb testing.TB, n, riders, recent int) *station.Station {
	tb.Helper()
	fs := fakestation.New(tb)
	proc := newFakeProc(tb)
	ledger := ""
	for i := range n {
		pid := 10000 + i
		proc.run(tb, pid, strconv.Itoa(pid))
		sid := fmt.Sprintf("dddddddd-0000-4000-8000-%012d", i)
		cwd := fmt.Sprintf("/home/u/proj%03d", i)
		r := row(pid, sid, fmt.Sprintf("proj%03d-aa", i), cwd, testNow.Add(-time.Duration(i)*time.Minute))
		r.ProcStart = strconv.Itoa(pid)
		fs.WriteRow(r)
		dir := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid)
		writeFile(tb, dir+transcriptfile.Ext, riderTranscript(tb, sid, "main", testNow.Add(-time.Hour), riderWorking), time.Time{})
		for j := range riders {
			kind := riderWorking
			if j%2 == 1 {
				kind = riderDone
			}
			mtime := testNow.Add(-time.Duration(j) * time.Second)
			if j >= recent {
				mtime = testNow.Add(-time.Hour)
			}
			addRider(tb, dir, "", fmt.Sprintf("r%02d", j), kind, mtime)
		}
		f := inboxv1.FilesFor(fs.Paths.InboxDir, sid)
		lines := ""
		for k := range 20 {
			lines += fmt.Sprintf("[mama 📡] line %d of session %d\n", k, i)
		}
		writeFile(tb, f.Inbox, lines, time.Time{})
		writeFile(tb, f.Offset, strconv.Itoa(len(lines)/2), time.Time{})
		writeHeartbeat(tb, fs.Paths.InboxDir, sid, inboxv1.Heartbeat{
			PID: pid, SessionID: sid, Since: "2026-11-30T11:00:00.000Z", LastSeen: "2026-11-30T11:59:59.000Z",
			State: inboxv1.StateFollowing, Mode: "mcp", Offset: int64(len(lines) / 2),
		})
		if i > 0 && i%10 == 0 {
			ledger += fmt.Sprintf(`{"ts":"2026-11-30T11:00:00.000Z","child_host":null,"child_session":"%s","parent_host":null,"parent_session":"dddddddd-0000-4000-8000-000000000000","title":"","by":"parent"}`+"\n", sid)
		}
	}
	writeFile(tb, fs.Paths.LineageFile(), ledger, time.Time{})
	return &station.Station{Paths: fs.Paths, Proc: station.Proc{Root: proc.root}, Now: func() time.Time { return testNow }}
}

// BenchmarkBuild200x10 is `sessions --json`'s library work on a station of
// 200 sessions with 10 riders each (budget: median ≤ 100 ms per document):
// recent is how many of each session's riders changed within the riding
// window (the others finished an hour ago); all lists finished riders too
// (--all), which reads every rider; cached, the riders have settled and
// the rider cache holds them (after the first Build).
func BenchmarkBuild200x10(b *testing.B) {
	for _, bc := range []struct {
		name    string
		recent  int
		all     bool
		settled bool // the riders settled: read through the rider cache
	}{
		{"recent=2", 2, false, false},
		{"recent=10", 10, false, false},
		{"recent=10/all", 10, true, false},
		{"recent=10/cached", 10, false, true},
		{"recent=10/all/cached", 10, true, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st := bigStation(b, 200, 10, bc.recent)
			opts := observatory.Options{Station: st, IncludeFinished: bc.all}
			if bc.settled {
				opts = observatory.WithFileNow(opts, settledLater)
			} else {
				// The riders were written just now: none has settled, and
				// no rider cache is kept.
				opts = observatory.WithFileNow(opts, time.Now)
			}
			for b.Loop() {
				doc, err := observatory.Build(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				first := doc.Sessions[len(doc.Sessions)-1] // the oldest is listed first
				if len(doc.Sessions) != 200 || first.RidersTotal != 10 || first.RidersRiding != (bc.recent+1)/2 || len(first.Children) != 19 {
					b.Fatalf("sessions %d, riders %d (%d riding), children %d", len(doc.Sessions), first.RidersTotal, first.RidersRiding, len(first.Children))
				}
			}
		})
	}
}
