package door_test

import (
	"context"
	"fmt"
	"os"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
)

// A doorman's step: dial the session's door, check that its own session's
// claude process listens there, write one line, settle.
func ExampleDialer_Dial() {
	fd, err := fakedoor.Listen("", fakedoor.Options{}) // stands in for the session's door
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fd.Close()

	ctx := context.Background()
	d := door.Dialer{ExpectPID: os.Getpid()} // the session's claude pid
	c, err := d.Dial(ctx, fd.Path())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	err = c.Deliver(ctx, door.Message{
		SessionID: "017c3f59-43cc-4dc8-bfb6-5e9a5625a864",
		From:      "oo-claude",
		MsgID:     "5b0e7c1e-8a3f-4d6b-9c2e-0f1a2b3c4d5e",
		Text:      "[oo-claude 📡] please rebase",
	})
	fmt.Println("delivered:", err == nil, "listener is the session:", c.Peer().PID == os.Getpid())
	for _, f := range fd.Frames() {
		fmt.Println(f.Disposition, f.MsgID, f.Content)
	}
	// Output:
	// delivered: true listener is the session: true
	// queued 5b0e7c1e-8a3f-4d6b-9c2e-0f1a2b3c4d5e [oo-claude 📡] please rebase
}

func ExampleMessage_Frames() {
	b, err := door.Message{
		SessionID: "017c3f59-43cc-4dc8-bfb6-5e9a5625a864",
		From:      "oo-claude",
		MsgID:     "5b0e7c1e-8a3f-4d6b-9c2e-0f1a2b3c4d5e",
		Priority:  door.PriorityNow,
		Text:      "stop <now>",
	}.Frames()
	fmt.Print(string(b), err)
	// Output:
	// {"type":"user","session_id":"017c3f59-43cc-4dc8-bfb6-5e9a5625a864","from":"oo-claude","msg_id":"5b0e7c1e-8a3f-4d6b-9c2e-0f1a2b3c4d5e","priority":"now","message":{"role":"user","content":"stop <now>"}}
	// <nil>
}
