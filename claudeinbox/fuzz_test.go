package claudeinbox_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/hostile"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// lineSeeds are the fuzz seeds of a line: hostile.Lines.
var lineSeeds = hostile.Lines(inboxv1.MaxLineBytes)

// jsonMember is one member of a JSON object, its value as written.
type jsonMember struct {
	Key, Val string
}

// jsonMembers returns the members of the JSON object s in order, or false.
func jsonMembers(s string) ([]jsonMember, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []jsonMember
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		var val json.RawMessage
		if err != nil || !ok || dec.Decode(&val) != nil {
			return nil, false
		}
		out = append(out, jsonMember{key, string(val)})
	}
	return out, true
}

// FuzzWithPriority: a structured line given a now or later priority
// round-trips: every member it had is there, in order, key and value as
// written, except the priority (set once, to the priority asked for) and
// a missing or null version (the contract's, put first); the reader sees
// the same text, sender, id and ts. A plain line becomes a structured one
// whose line is the plain line. (A line CheckLine refuses is refused,
// priority or not.)
func FuzzWithPriority(f *testing.F) {
	for _, s := range append(lineSeeds,
		`{"line":"x"}`, `{"v":1,"x-trace":{"a":[1, 2]},"line":"<&>","priority":"later"}`,
		`{"Priority":"later","line":"x","PRIORITY":"now"}`, `{"v":null,"line":"x","V":null}`,
		`{"v":0,"line":"x"}`, `{"line":"x","line":"y","z":"\u003c"}`, ` {"line":"x"} `) {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, line string, now bool) {
		p := inboxv1.PriorityLater
		if now {
			p = inboxv1.PriorityNow
		}
		if inbox.CheckLine([]byte(line)) != nil {
			return // Send refuses it, priority or not
		}
		out, got := claudeinbox.WithPriority(line, p)
		if got != p {
			t.Fatalf("priority %q, want %q", got, p)
		}
		st, ok := inbox.ParseStructured([]byte(out))
		if !ok || st.Priority != p {
			t.Fatalf("%q: read back %+v %v, want priority %s", out, st, ok, p)
		}
		in, structured := inbox.ParseStructured([]byte(line))
		if !structured {
			if st.Line != line || st.V != inboxv1.Version {
				t.Fatalf("plain %q became %q", line, out)
			}
			return
		}
		if in.Line != st.Line || in.From != st.From || in.ID != st.ID || in.TS != st.TS {
			t.Fatalf("%q became %q: read %+v, want %+v", line, out, st, in)
		}
		inM, ok1 := jsonMembers(line)
		outM, ok2 := jsonMembers(out)
		if !ok1 || !ok2 {
			t.Fatalf("%q became %q: not JSON objects (%v %v)", line, out, ok1, ok2)
		}
		hasV := false
		for _, m := range inM {
			hasV = hasV || strings.EqualFold(m.Key, "v") && m.Val != "null"
		}
		keep := func(ms []jsonMember) (kept []jsonMember, prio []string) {
			for _, m := range ms {
				switch {
				case strings.EqualFold(m.Key, "priority"):
					prio = append(prio, m.Val)
				case !strings.EqualFold(m.Key, "v") || m.Val != "null":
					kept = append(kept, m)
				}
			}
			return kept, prio
		}
		wantM, _ := keep(inM)
		gotM, prio := keep(outM)
		if !hasV {
			wantM = append([]jsonMember{{"v", strconv.Itoa(inboxv1.Version)}}, wantM...)
		}
		if diff := cmp.Diff(wantM, gotM); diff != "" {
			t.Errorf("%q became %q: members (-want +got):\n%s", line, out, diff)
		}
		if diff := cmp.Diff([]string{`"` + p + `"`}, prio); diff != "" {
			t.Errorf("%q became %q: priority keys (-want +got):\n%s", line, out, diff)
		}
	})
}
