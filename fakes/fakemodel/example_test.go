package fakemodel_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// A test scripts a tool call and a final answer, runs its client against
// srv.URL (for Claude Code: ANTHROPIC_BASE_URL), then asserts what the
// model was shown.
func Example() {
	srv := fakemodel.NewServer(fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 2"),
		fakemodel.Text("done")}})
	defer srv.Close()

	// Here the client is a plain HTTP POST; a real test starts claude -p.
	body := `{"model":"claude-haiku-5-5","messages":[{"role":"user","content":"run it"}],` +
		`"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	resp, err := c.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()

	r, err := srv.WaitRequest(context.Background(), func(r *fakemodel.Request) bool {
		return r.Contains("run it")
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Seq, r.Model, r.ToolNames(), srv.Pending())
	// Output: 1 claude-haiku-5-5 [Bash] 1
}
