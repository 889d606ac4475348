package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// recordEnv names a directory into which tests copy the transcripts they
// made, with this machine's paths rewritten to neutral ones, for the
// transcript package's goldens (transcript/testdata/real):
//
//	export OO_CLAUDE_E2E_CLAUDE=$(scripts/install-claude-code.sh)
//	OO_CLAUDE_E2E_RECORD=$PWD/transcript/testdata/real go test ./e2e -count=1 -run 'TestSteer$|TestResume|TestRider'
const recordEnv = "OO_CLAUDE_E2E_RECORD"

var osVersionRE = regexp.MustCompile(`Linux [0-9][^"\\]*`)

// record copies the transcript at path to <OO_CLAUDE_E2E_RECORD>/<name>.jsonl
// when that variable is set, neutralised: the world's dirs become
// /home/u/…, the oo-claude binary /usr/local/bin/oo-claude, the kernel
// version a fixed one.
func (w *world) record(path, name string) {
	w.t.Helper()
	dir := os.Getenv(recordEnv)
	if dir == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatalf("record %s: %v", name, err)
	}
	out := w.neutral(string(b))
	if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(out), 0o600); err != nil {
		w.t.Fatalf("record %s: %v", name, err)
	}
	w.t.Logf("recorded %s into %s", name, dir)
}

// neutral rewrites this machine's paths in s.
func (w *world) neutral(s string) string {
	r := strings.NewReplacer(
		ooClaudeBin, "/usr/local/bin/oo-claude",
		w.cwd, "/home/u/proj",
		encodeCwd(w.cwd), "-home-u-proj",
		w.root, "/home/u/e2e",
	)
	return osVersionRE.ReplaceAllString(r.Replace(s), "Linux 6.0.0-generic")
}
