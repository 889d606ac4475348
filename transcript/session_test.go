package transcript_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

func TestReadSession(t *testing.T) {
	const sid = "6f4333bb-8aef-4dfe-81b7-7feca9be5559" // the recorded steered turn
	fs := fakestation.New(t)
	row := fs.AddSession(fakestation.Session{SessionID: sid, CWD: "/home/u/proj", Name: "proj-e9", Status: station.StatusIdle})
	src, err := os.ReadFile("testdata/real/steered-turn.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(row.CWD))
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, sid+transcriptfile.Ext), src, 0o600); err != nil {
		t.Fatal(err)
	}
	st := fs.Station()

	r, err := transcript.ReadSession(st, fs.Paths.ProjectsDir, "proj-e9", 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Session != sid || !r.Running || r.Status != station.StatusIdle || r.PID != row.PID || r.Turns != transcript.DefaultExchanges {
		t.Errorf("reading = %+v", r)
	}
	if len(r.Exchanges) == 0 || len(r.Exchanges[len(r.Exchanges)-1].Peers) != 1 || r.Exchanges[len(r.Exchanges)-1].Peers[0].MsgID == "" {
		t.Errorf("exchanges lack the steered peer line with its msg_id: %+v", r.Exchanges)
	}

	fs.RemoveSession(row.PID)
	r, err = transcript.ReadSession(st, fs.Paths.ProjectsDir, sid, 1)
	if err != nil || r.Running || r.Status != "offline" || len(r.Exchanges) != 1 {
		t.Errorf("offline by full id: %+v, %v", r, err)
	}
	if _, err := transcript.ReadSession(st, fs.Paths.ProjectsDir, "proj-e9", 1); !errors.Is(err, station.ErrUnknownTarget) {
		t.Errorf("a name of a session that is not running: err = %v, want ErrUnknownTarget", err)
	}
	r, err = transcript.ReadSession(st, fs.Paths.ProjectsDir, "11111111-2222-4333-8444-555555555555", 1)
	if !errors.Is(err, transcript.ErrNotFound) || r.Session == "" {
		t.Errorf("no transcript: %+v, err = %v, want ErrNotFound with the session named", r, err)
	}
}
