package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestTranscriptLocation: a session's transcript is
// <cfg>/projects/<encoded realpath of cwd>/<sessionId>.jsonl, 0600, with
// the encoding the transcript package implements (non-alphanumeric UTF-16
// units become '-', long names are cut at 200 and get a hash suffix).
func TestTranscriptLocation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		dir  string // under the world's root
		want string // the encoded tail of the directory name, "" to skip
	}{
		{name: "punctuation and non-ASCII", dir: "ü dir.x_y+é~", want: "-tmp--dir-x-y---"},
		{name: "astral plane", dir: "a😀b", want: "-a--b"},
		{name: "longer than 200", dir: strings.Repeat("deep-dir/", 24) + "end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Text("noted")}})
			cwd := filepath.Join(w.root, tt.dir)
			if err := os.MkdirAll(cwd, 0o700); err != nil {
				t.Fatal(err)
			}
			s := w.startIn(cwd, pargs("remember this"))
			res := s.mustSucceed(60 * time.Second)
			sid, _ := res["session_id"].(string)
			enc := encodeCwd(cwd)
			if tt.want != "" && !strings.HasSuffix(enc, strings.TrimPrefix(tt.want, "-tmp")) {
				t.Fatalf("encodeCwd(%q) = %q, want suffix %q (the test's own encoder is wrong)", cwd, enc, tt.want)
			}
			if len([]rune(cwd)) > 200 && len(enc) <= 201 {
				t.Fatalf("encodeCwd of a long path = %q, want a hash suffix", enc)
			}
			path := w.transcriptPath(cwd, sid)
			if _, err := os.Stat(path); err != nil {
				entries, _ := os.ReadDir(filepath.Join(w.config, "projects"))
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				s.fatalf("transcript not where the encoding puts it: %v\nprojects/ holds %q", err, names)
			}
			checkMode(t, path, 0o600)
			rows := readJSONL(t, path)
			found := false
			for _, r := range rows {
				if r["sessionId"] == sid && r["type"] == "user" {
					found = true
				}
			}
			if !found {
				s.errorf("transcript %s has no user row of session %s (%d rows)", path, sid, len(rows))
			}
		})
	}
}

// TestResumeKeepsSession: `--resume <sid>` keeps the session id, appends
// to the same transcript, and shows the model the earlier exchange.
func TestResumeKeepsSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Text("first answer"), fakemodel.Text("second answer")}})
	first := w.start(pargs("first prompt")).mustSucceed(60 * time.Second)
	sid, _ := first["session_id"].(string)
	path := w.transcriptPath(w.cwd, sid)
	before := len(readJSONL(t, path))

	s := w.start(pargs("second prompt", "--resume", sid))
	res := s.mustSucceed(60 * time.Second)
	if res["session_id"] != sid || res["result"] != "second answer" {
		s.errorf("resumed result session_id, result = %v, %v; want %s, second answer", res["session_id"], res["result"], sid)
	}
	rows := readJSONL(t, path)
	if len(rows) <= before {
		s.errorf("transcript %s did not grow on resume (%d rows before, %d after)", path, before, len(rows))
	}
	b, _ := json.Marshal(rows)
	if !strings.Contains(string(b), "second prompt") {
		s.errorf("the resumed prompt is not in the transcript")
	}
	last := w.model.Requests()
	if n := len(last); n == 0 || !last[n-1].MessagesContain("first answer") || !last[n-1].MessagesContain("second prompt") {
		s.errorf("the resumed request does not carry the earlier exchange")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") && e.Name() != sid+".jsonl" {
			s.errorf("resume wrote a second transcript %s", e.Name())
		}
	}
}
