// Command watch prints what happens on the station, one line per event:
// sessions starting and ending, doormen coming up, lines sent and
// delivered, answers, riders. It runs until interrupted.
//
//	go run ./examples/watch
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

func main() {
	cfg, err := station.ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	events, err := observatory.Watch(ctx, observatory.WatchOptions{Station: station.New(cfg.Paths)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for e := range events { // closed when ctx ends
		detail := e.Name + e.Doorman + e.Class
		if e.Text != "" {
			detail += " " + e.Text
		} else if e.Line != "" {
			detail += " " + e.Line
		}
		fmt.Printf("%s %-16s %.8s %s\n", e.TS, e.Event, e.Session, detail)
	}
}
