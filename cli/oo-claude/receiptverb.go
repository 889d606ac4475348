package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/oo-family/oo-claude/receipt"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newReceiptCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("receipt", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the receipt row as it was written (one JSON line)")
	host := registerHost(fs, false)
	return &ffcli.Command{
		Name:       "receipt",
		ShortUsage: "oo-claude receipt MSG_ID [--json] [--host DEST]",
		ShortHelp:  "print the receipt of a past send by its msg_id (e.g. after a connection dropped during --reply)",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 1 {
				return usagef("receipt needs one msg_id")
			}
			if len(host.dests) > 0 {
				return remoteVerb(ctx, e, host.dests[0], remoteArgs([]string{"receipt"}, fs, pos))
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			row, err := receipt.Find(cfg.ReceiptsFile(), pos[0])
			if errors.Is(err, receipt.ErrNotFound) {
				return &exitError{code: exitFail, err: fmt.Errorf("no receipt in %s names msg_id %q", cfg.ReceiptsFile(), pos[0])}
			}
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			if *asJSON {
				_, err := fmt.Fprintln(e.stdout, string(row))
				return err
			}
			var r map[string]any
			if err := json.Unmarshal(row, &r); err != nil {
				return &exitError{code: exitFail, err: err}
			}
			out := e.human()
			for _, k := range []string{"ts", "kind", "class", "target", "session_id", "station", "msg_id", "seen", "reason", "note"} {
				if v, ok := r[k]; ok && v != nil {
					fmt.Fprintf(out, "%s: %v\n", k, v)
				}
			}
			if rep, ok := r["reply"].(map[string]any); ok {
				fmt.Fprintf(out, "reply:\n%v\n", rep["text"])
			}
			return nil
		},
	}
}
