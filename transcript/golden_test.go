package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

var update = flag.Bool("update", false, "rewrite testdata/synthetic and the .golden.json files")

// golden is what a <name>.golden.json file holds for <name>.jsonl.
type golden struct {
	Exchanges []Exchange `json:"exchanges"` // every exchange of the transcript
	BadLines  int        `json:"bad_lines"`
	TornBytes int64      `json:"torn_bytes"`
}

// goldenFiles are the transcripts of the golden test: the synthetic ones,
// the real recordings under testdata/real and the sessions of the sample
// projects tree. Adding <name>.jsonl there and running
// `go test ./transcript -run TestGolden -update` adds a case.
func goldenFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"testdata/synthetic/*.jsonl", "testdata/real/*.jsonl", "testdata/projects/*/*.jsonl"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

func TestSyntheticFilesAreCurrent(t *testing.T) {
	for name, content := range syntheticTranscripts() {
		p := filepath.Join("testdata", "synthetic", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if string(got) != content {
			t.Errorf("%s differs from the builder's output; run with -update", p)
		}
	}
}

func TestGolden(t *testing.T) {
	files := goldenFiles(t)
	if len(files) < 5 {
		t.Fatalf("only %d golden transcripts found", len(files))
	}
	for _, p := range files {
		t.Run(strings.TrimPrefix(p, "testdata/"), func(t *testing.T) {
			f, size, err := openTranscript(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ex, st, err := exchangesFrom(f, size, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			got := golden{Exchanges: ex, BadLines: st.BadLines, TornBytes: st.TornBytes}
			gp := strings.TrimSuffix(p, transcriptfile.Ext) + ".golden.json"
			if *update {
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if err := enc.Encode(got); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(gp, buf.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(gp)
			if errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("no %s: run go test -run TestGolden -update", gp)
			}
			if err != nil {
				t.Fatal(err)
			}
			var want golden
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			// Compare through JSON so the golden file's form is the contract.
			if diff := cmp.Diff(roundTrip(t, want), roundTrip(t, got)); diff != "" {
				t.Errorf("exchanges of %s (-want +got):\n%s", p, diff)
			}

			// The last 3 exchanges are the tail of all of them.
			last, _, err := exchangesFrom(f, size, 0)
			if err != nil {
				t.Fatal(err)
			}
			tail := ex[max(0, len(ex)-DefaultExchanges):]
			if diff := cmp.Diff(roundTrip(t, tail), roundTrip(t, last)); diff != "" {
				t.Errorf("last %d exchanges (-want +got):\n%s", DefaultExchanges, diff)
			}
		})
	}
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
