package transcript_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/transcript"
)

func ExampleLocate() {
	p, err := transcript.Locate("testdata/projects", "22222222-3333-4444-8555-666666666666", "/home/u/proj")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.ToSlash(p))

	_, err = transcript.Locate("testdata/projects", "../../etc/passwd", "")
	fmt.Println(err)
	// Output:
	// testdata/projects/-home-u-proj/22222222-3333-4444-8555-666666666666.jsonl
	// transcript locate testdata/projects: transcript: session id is not a UUID
}

// A transcript recorded from the real Claude Code: a turn steered by a peer
// line ("next", absorbed mid-turn), then a turn a peer line started
// ("later").
func ExampleExchanges() {
	ex, err := transcript.Exchanges("testdata/real/steer-next-and-later.jsonl", 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range ex {
		fmt.Printf("%s prompt: %q\n", e.Prompt.Kind, e.Prompt.Text)
		if p := e.Prompt.Peer; p != nil {
			fmt.Printf("  started by %s, msg_id %s\n", p.From, p.MsgID)
		}
		for _, t := range e.Tools {
			fmt.Printf("  tool %s: %s\n", t.Name, t.Input)
		}
		for _, p := range e.Peers {
			fmt.Printf("  peer line from %s, msg_id %s: %q\n", p.From, p.MsgID, p.Text)
		}
		fmt.Printf("  assistant (%s): %q\n", e.StopReason, e.Assistant)
	}
	// Output:
	// user prompt: "run the tool please"
	//   tool Bash: sleep 6
	//   peer line from mama, msg_id 58b50e71-3528-44fb-bc68-56348cb38765: "NEXT-LINE from mama"
	//   assistant (end_turn): "PEER-REPLY to the later line."
	// peer prompt: "LATER-LINE from omi"
	//   started by omi, msg_id 331f583e-67e7-4ba3-ae46-9d3bdcb7211c
	//   assistant (end_turn): "PEER-REPLY to the later line."
}

func ExampleRiders() {
	sessionDir := "testdata/projects/-home-u-proj/22222222-3333-4444-8555-666666666666"
	fi, err := os.Stat(filepath.Join(sessionDir, "subagents", "agent-aeea12bbda4d6be3c.jsonl"))
	if err != nil {
		fmt.Println(err)
		return
	}
	now := fi.ModTime().Add(time.Minute)                 // a seam: pass time.Now() in a program
	riders, err := transcript.Riders(sessionDir, now, 0) // 0: the default window, ten minutes
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range riders {
		fmt.Printf("%s %s (%s) %s/%s last_step=%q last_text=%q\n",
			r.Agent, r.AgentType, r.Description, r.State, r.StateReason, r.LastStep, r.LastText)
	}
	// Output:
	// aeea12bbda4d6be3c general-purpose (list files) quiet/finished/final-text last_step="Bash: ls /" last_text="Subagent finished: listed files."
}

// ReadReply reads the reply to a peer line from a transcript, by the msg_id
// of the send's receipt: here a line absorbed mid-turn in a recording of the
// real CLI.
func ExampleReadReply() {
	r, err := transcript.ReadReply("testdata/real/steered-turn.jsonl", "6c6c667d-dc66-465b-8e42-2811789dfb0b", transcript.ReplyOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q stop=%s turn ended=%v tools=%v\n", r.Text, r.StopReason, r.TurnEnded, r.Tools)
	// Output: "done" stop=end_turn turn ended=true tools=[]
}
