package station

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var rowSeeds = []string{
	// As Claude Code writes them (claude-code-facts.md), and as the fakes do.
	`{"pid":10718,"sessionId":"017c3f59-43cc-4dc8-bfb6-5e9a5625a864","cwd":"/home/u/work","startedAt":1796065828540,"procStart":"92840","version":"2.1.332","peerProtocol":1,"peerFeatures":["notify_idle","reply_across_default_dirs","artifact_yield"],"kind":"interactive","entrypoint":"sdk-cli","pidDomain":"linux:m:pid:[4026531836]","asksForConvertedSkills":null,"messagingSocketPath":"/tmp/cc-socks/10718.sock","name":"work-e9","nameSource":"derived","nameSince":1796065828540,"status":"busy","updatedAt":1796065828520,"statusUpdatedAt":1796065828520}`,
	`{"asksForConvertedSkills":null,"cwd":"/tmp/x","entrypoint":"sdk-cli","kind":"interactive","messagingSocketPath":"/tmp/x/cc-socks/23145.sock","name":"fake-target","nameSince":1796292823735,"nameSource":"user","peerFeatures":[],"peerProtocol":1,"pid":23145,"pidDomain":"linux:fake:pid:[4026531836]","procStart":"663891","sessionId":"6add7575-18c3-4845-b635-53ea26619a4d","startedAt":1796292823735,"status":"idle","statusUpdatedAt":1796292823735,"updatedAt":1796292823735,"version":"2.1.332","tmux":"s:@1.%2","hostSessionId":"local_0123abcd"}`,
	`{"pid":1,"sessionId":"s","waitingFor":null,"peerFeatures":null}`,
	// What the fast path leaves to encoding/json.
	`{"pid":1,"waitingFor":{"kind":"permission"}}`, `{"pid":1,"asksForConvertedSkills":true}`, `{"pid":1e3}`,
	`{"pid":"1"}`, `{"Pid":1}`, `{"pid":1,"pid":2}`, `{"peerFeatures":[1]}`, `{"startedAt":99999999999999999999}`, `null`, `{"cwd":"\u00e9"}`,
}

// TestDecodeRowSeeds: each seed decodes as json.Unmarshal decodes it, and
// the rows Claude Code writes take the fast path.
func TestDecodeRowSeeds(t *testing.T) {
	for i, seed := range rowSeeds {
		checkRow(t, []byte(seed))
		if _, ok := scanRow([]byte(seed)); i < 3 && !ok {
			t.Errorf("row %s: not read by the fast path", seed)
		}
	}
}

func checkRow(t *testing.T, b []byte) {
	t.Helper()
	got, err := decodeRow(b)
	var want Row
	werr := json.Unmarshal(b, &want)
	if (err == nil) != (werr == nil) {
		t.Fatalf("row %q: error %v, encoding/json's %v", b, err, werr)
	}
	if diff := cmp.Diff(want, got); err == nil && diff != "" {
		t.Fatalf("row %q: (-encoding/json +decodeRow)\n%s", b, diff)
	}
}

// FuzzDecodeRow: decodeRow is json.Unmarshal's, value and error, on any
// text.
func FuzzDecodeRow(f *testing.F) {
	for _, s := range rowSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) { checkRow(t, []byte(text)) })
}

// TestDecodeRowKnowsEveryField: rowKeys names every field of Row, in its
// order: a field added to Row and not to the one-pass reader would be
// dropped without a word.
func TestDecodeRowKnowsEveryField(t *testing.T) {
	var want []string
	for f := range reflect.TypeFor[Row]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		want = append(want, name)
	}
	if !slices.Equal(rowKeys[:], want) {
		t.Errorf("rowKeys = %q, want Row's %q", rowKeys, want)
	}
}
