package fakedoor_test

import (
	"context"
	"fmt"
	"net"

	"github.com/oo-family/oo-claude/fakes/fakedoor"
)

func ExampleListen() {
	d, err := fakedoor.Listen("", fakedoor.Options{}) // in a test: fakedoor.New(t, fakedoor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	c, err := net.Dial("unix", d.Path())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprint(c, `{"type":"user","from":"me","message":{"role":"user","content":"hi"}}`+"\n")
	c.Close()

	frames, err := d.WaitFrames(context.Background(), 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range frames {
		fmt.Println(f.Disposition, f.From, f.Priority, f.Content)
	}
	// Output:
	// queued me next hi
}
