package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/station"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newLineageCmd(e *env) *ffcli.Command {
	return &ffcli.Command{
		Name:        "lineage",
		ShortUsage:  "oo-claude lineage register --parent <local_id|uuid> [--child <uuid>] [--child-host <local_id>] [--title T] [--by child|parent|dispatcher] [--json] · oo-claude lineage show [--json] [--host DEST]",
		ShortHelp:   "record and show which session started which",
		FlagSet:     flag.NewFlagSet("lineage", flag.ContinueOnError),
		Subcommands: []*ffcli.Command{newLineageRegisterCmd(e), newLineageShowCmd(e)},
		Exec: func(context.Context, []string) error {
			return usagef("lineage takes register or show (oo-claude help lineage)")
		},
	}
}

func newLineageRegisterCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("lineage register", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var link lineage.Link
	fs.StringVar(&link.Parent, "parent", "", "the parent session: its local_… host id or its session id")
	fs.StringVar(&link.Child, "child", "", "the child's session id (default: the calling session)")
	fs.StringVar(&link.ChildHost, "child-host", "", "the child's local_… host id")
	fs.StringVar(&link.Title, "title", "", "a title")
	by := fs.String("by", "child", "who registers: child, parent or dispatcher")
	asJSON := fs.Bool("json", false, "print the row as one JSON line")
	return &ffcli.Command{
		Name:       "register",
		ShortUsage: "oo-claude lineage register --parent <local_id|uuid> [--child <uuid>] [--child-host <local_id>] [--title T] [--by child|parent|dispatcher] [--json]",
		ShortHelp:  "record a session's parent",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("lineage register takes no arguments")
			}
			if link.Parent == "" {
				return usagef("lineage register needs --parent")
			}
			link.By = lineage.By(*by)
			if !link.By.Valid() {
				return usagef("--by must be child, parent or dispatcher")
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			st := station.New(cfg.Paths)
			if link.Child == "" && link.ChildHost == "" {
				sid, host, _ := st.CallingSession(e.pid, e.getenv("CLAUDE_CODE_SESSION_ID"))
				link.Child, link.ChildHost = sid, host
			}
			led := &lineage.Ledger{Path: cfg.LineageFile(), Sessions: st}
			res, err := led.Register(ctx, link)
			if err != nil {
				var le *os.PathError // the ledger's, Op "lineage register"
				if errors.As(err, &le) && strings.HasPrefix(le.Op, "lineage ") {
					fmt.Fprintf(e.stderr, "oo-claude: %s\n", lineageMessage(le.Err))
					return exitWith(exitFail)
				}
				return err
			}
			if *asJSON {
				return printJSONLine(e, struct {
					lineage.Row
					Appended bool `json:"appended"`
				}{res.Row, res.Appended})
			}
			return writeRegistered(e.human(), res)
		},
	}
}

func newLineageShowCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("lineage show", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	asJSON := fs.Bool("json", false, "print the current links as one JSON array")
	host := registerHost(fs, false)
	return &ffcli.Command{
		Name:       "show",
		ShortUsage: "oo-claude lineage show [--json] [--host DEST]",
		ShortHelp:  "the current parent of every child",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("lineage show takes no arguments")
			}
			if len(host.dests) > 0 {
				return lineageRemote(ctx, e, host.dests[0], *asJSON)
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			links, err := (&lineage.Ledger{Path: cfg.LineageFile()}).Links(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				if links == nil {
					links = []lineage.Row{}
				}
				return printJSONLine(e, links)
			}
			return writeLinks(e.human(), links, cfg.LineageFile())
		},
	}
}
