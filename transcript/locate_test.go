package transcript

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLocate(t *testing.T) {
	const (
		sidA    = "aaaaaaaa-1111-4111-8111-111111111111"
		sidDup  = "bbbbbbbb-2222-4222-8222-222222222222"
		sidLnk  = "cccccccc-3333-4333-8333-333333333333"
		sidNo   = "dddddddd-4444-4444-8444-444444444444"
		sidFifo = "ffffffff-6666-4666-8666-666666666666"
	)
	projects := t.TempDir()
	work := filepath.Join(projects, transcriptfile.EncodeProjectDir("/home/u/proj"))
	other := filepath.Join(projects, "-home-u-other")
	renamed := filepath.Join(projects, "custom-name") // CLAUDE_CODE_PROJECT_DIR_NAME
	writeFile(t, filepath.Join(work, sidA+transcriptfile.Ext), "{}\n")
	writeFile(t, filepath.Join(work, sidDup+transcriptfile.Ext), "{}\n")
	writeFile(t, filepath.Join(other, sidDup+transcriptfile.Ext), "{}\n")
	writeFile(t, filepath.Join(renamed, "eeeeeeee-5555-4555-8555-555555555555"+transcriptfile.Ext), "{}\n")
	if err := os.Symlink(filepath.Join(work, sidA+transcriptfile.Ext), filepath.Join(other, sidLnk+transcriptfile.Ext)); err != nil {
		t.Fatal(err)
	}

	if err := syscall.Mkfifo(filepath.Join(other, sidFifo+transcriptfile.Ext), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, sid, cwd string
		want           string
		wantErr        error
	}{
		{name: "by cwd", sid: sidA, cwd: "/home/u/proj", want: filepath.Join(work, sidA+transcriptfile.Ext)},
		{name: "by scan", sid: sidA, want: filepath.Join(work, sidA+transcriptfile.Ext)},
		{name: "wrong cwd falls back to the scan", sid: sidA, cwd: "/elsewhere", want: filepath.Join(work, sidA+transcriptfile.Ext)},
		{name: "renamed project dir found by the scan", sid: "eeeeeeee-5555-4555-8555-555555555555", cwd: "/home/u/proj", want: filepath.Join(renamed, "eeeeeeee-5555-4555-8555-555555555555"+transcriptfile.Ext)},
		{name: "cwd decides between duplicates", sid: sidDup, cwd: "/home/u/other", want: filepath.Join(other, sidDup+transcriptfile.Ext)},
		{name: "duplicates are ambiguous", sid: sidDup, wantErr: ErrAmbiguous},
		{name: "missing", sid: sidNo, wantErr: ErrNotFound},
		// Something that is not a regular file sits where the transcript
		// should be: said as such (it was "not found"), naming the path.
		{name: "a symlink is not a transcript", sid: sidLnk, wantErr: ErrNotRegular},
		{name: "a FIFO is not a transcript", sid: sidFifo, wantErr: ErrNotRegular},
		{name: "a FIFO at the cwd's path", sid: sidFifo, cwd: "/home/u/other", wantErr: ErrNotRegular},
		{name: "path traversal", sid: "../../etc/passwd", wantErr: ErrBadSessionID},
		{name: "glob characters", sid: "*", wantErr: ErrBadSessionID},
		{name: "uuid with a slash", sid: "aaaaaaaa-1111-4111-8111/11111111111", wantErr: ErrBadSessionID},
		{name: "empty", sid: "", wantErr: ErrBadSessionID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Locate(projects, tt.sid, tt.cwd)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				var e *fs.PathError
				if !errors.As(err, &e) || e.Op != "transcript locate" {
					t.Errorf("err = %#v, want an *fs.PathError with Op transcript locate", err)
				}
				if errors.Is(tt.wantErr, ErrNotRegular) && (errors.Is(err, ErrNotFound) || filepath.Base(e.Path) != tt.sid+transcriptfile.Ext) {
					t.Errorf("err = %v, want one naming the file and not matching ErrNotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Locate = %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("no projects dir", func(t *testing.T) {
		_, err := Locate(filepath.Join(projects, "nope"), sidA, "")
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
}

func TestRecordedCWD(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, transcriptfile.EncodeProjectDir("/home/u/proj"))
	steer := newBuilder(testSID, "/home/u/proj")
	steeredTurn(steer, 1)
	moved := newBuilder(testSID, "/home/u/proj/sub")
	moved.prompt("cd'd first")
	noCWD := `{"type":"mode","mode":"default"}` + "\n"
	tests := []struct {
		name, file, content, want string
		wantErr                   error
	}{
		{name: "first row with a cwd", file: filepath.Join(proj, "a.jsonl"), content: steer.String(), want: "/home/u/proj"},
		{name: "prefers the cwd that names the dir", file: filepath.Join(proj, "b.jsonl"), content: moved.String() + steer.String(), want: "/home/u/proj"},
		{name: "else the first one", file: filepath.Join(dir, "elsewhere", "c.jsonl"), content: moved.String() + steer.String(), want: "/home/u/proj/sub"},
		{name: "none", file: filepath.Join(proj, "d.jsonl"), content: noCWD, wantErr: transcriptfile.ErrNoCWD},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeFile(t, tt.file, tt.content)
			got, err := transcriptfile.RecordedCWD(tt.file)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("RecordedCWD = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("symlink refused", func(t *testing.T) {
		link := filepath.Join(proj, "link.jsonl")
		if err := os.Symlink(filepath.Join(proj, "a.jsonl"), link); err != nil {
			t.Fatal(err)
		}
		if _, err := transcriptfile.RecordedCWD(link); err == nil {
			t.Fatal("RecordedCWD followed a symlink")
		}
		if _, err := Exchanges(link, 3); err == nil {
			t.Fatal("Exchanges followed a symlink")
		}
	})
}

func TestRealTranscriptLocated(t *testing.T) {
	const sid = "22222222-3333-4444-8555-666666666666"
	p, err := Locate("testdata/projects", sid, "/home/u/proj")
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := transcriptfile.RecordedCWD(p)
	if err != nil {
		t.Fatal(err)
	}
	if cwd != "/home/u/proj" || !transcriptfile.CWDMatches(filepath.Base(filepath.Dir(p)), cwd) {
		t.Errorf("RecordedCWD = %q for %s", cwd, p)
	}
}
