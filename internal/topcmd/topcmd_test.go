package topcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/internal/topreq"
)

// What the program cannot run with exits 2 and says why on stderr: a
// command line oo-claude did not write, a stdio that is not a terminal.
func TestMainRefuses(t *testing.T) {
	good := topreq.Request{OOClaude: "/usr/bin/oo-claude", From: "human"}.Argv()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "x"}, "this program is run by `oo-claude top`"},
		{good, "top needs a terminal"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), c.args, strings.NewReader(""), &out, &errb, func(string) string { return "" }, nil)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) || out.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 saying %q", c.args, code, out.String(), errb.String(), c.want)
		}
	}
}
