package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/transcript"
)

// doormanState is the one-word doorman state the human listings show: none
// (no heartbeat), the heartbeat's state when it is fresh ("fresh" for a
// contract-v1 doorman without one), else why it is not fresh (its state
// when that is the reason: stopped, switched, ...).
func doormanState(d *observatory.Doorman) string {
	switch {
	case d == nil:
		return "none"
	case d.Fresh && d.State != "":
		return string(d.State)
	case d.Fresh:
		return "fresh"
	case d.NotFreshBecause == "state" && d.State != "":
		return string(d.State)
	case d.NotFreshBecause != "":
		return string(d.NotFreshBecause)
	}
	return "not-fresh"
}

// startTime renders a registry start time (unix ms) in UTC.
func startTime(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05Z")
}

// writeTree writes the human form of `oo-claude sessions`: one line per
// session with its status, riders riding/total, doorman state, pending
// lines and start time, children indented under their parent, then the
// offline inboxes that hold waiting lines.
func writeTree(w io.Writer, doc *observatory.Document) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tNAME\tPID\tSTATUS\tRIDERS\tDOORMAN\tPENDING\tSTARTED")
	if len(doc.Sessions) == 0 {
		fmt.Fprintln(tw, "(no running sessions)")
	}
	for _, n := range sessionTree(doc.Sessions) {
		s := doc.Sessions[n.Index]
		fmt.Fprintf(tw, "%s%s\t%s\t%d\t%s\t%d/%d\t%s\t%d\t%s\n",
			strings.Repeat("  ", n.Depth), s.Session, dash(s.Name), s.PID, dash(s.Status),
			s.RidersRiding, s.RidersTotal, doormanState(s.Inbox.Doorman), s.Inbox.Pending, startTime(s.StartedMS))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(doc.OfflineInboxes) > 0 {
		fmt.Fprintf(w, "\nInboxes of sessions not running, with waiting lines (they wait for the session's next doorman):\n")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, o := range doc.OfflineInboxes {
			fmt.Fprintf(tw, "  %s\tpending %d\t%s\n", o.Session, o.Pending, string(o.LastLine))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, warn := range doc.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// treeNode is one session's place in the lineage tree: its index in the
// sessions slice and its depth (0 for a root).
type treeNode struct {
	Index int
	Depth int
}

// sessionTree orders sessions depth first: every session whose parent is not
// among them is a root (in the given order), each followed by its
// children. A cycle in the ledger is cut where it closes.
func sessionTree(sessions []observatory.Session) []treeNode {
	idx := make(map[string]int, len(sessions))
	for i, s := range sessions {
		idx[s.Session] = i
	}
	parentOf := func(s observatory.Session) (int, bool) {
		if s.ParentSession == "" {
			return 0, false
		}
		p, ok := idx[string(s.ParentSession)]
		return p, ok && sessions[p].Session != s.Session
	}
	kids := make(map[int][]int)
	var roots []int
	for i, s := range sessions {
		if p, ok := parentOf(s); ok {
			kids[p] = append(kids[p], i)
		} else {
			roots = append(roots, i)
		}
	}
	var out []treeNode
	seen := make([]bool, len(sessions))
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if seen[i] {
			return
		}
		seen[i] = true
		out = append(out, treeNode{Index: i, Depth: depth})
		for _, k := range kids[i] {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	// Sessions caught in a parent cycle have no root: show them flat.
	for i := range sessions {
		walk(i, 0)
	}
	return out
}

// writeRiders writes the human form of `oo-claude riders`: each session
// with its riders, one line per rider (state, last activity, rows, agent
// type, description) and its last step or text. Sessions without listed
// riders are left out, unless the document holds a single session (a
// riders target), which is always shown.
func writeRiders(w io.Writer, doc *observatory.Document) error {
	shown := 0
	for _, s := range doc.Sessions {
		if len(s.Riders) == 0 && len(doc.Sessions) > 1 {
			continue
		}
		if shown > 0 {
			fmt.Fprintln(w)
		}
		shown++
		head := fmt.Sprintf("%s %s (%s)", s.Session, dash(s.Name), dash(s.Status))
		if s.PID > 0 {
			head = fmt.Sprintf("%s %s pid %d (%s)", s.Session, dash(s.Name), s.PID, dash(s.Status))
		}
		fmt.Fprintf(w, "%s  riders %d/%d riding\n", head, s.RidersRiding, s.RidersTotal)
		if len(s.Riders) == 0 {
			fmt.Fprintf(w, "  %s\n", noRiders(doc))
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, r := range s.Riders {
			state := string(r.State)
			if r.StateReason != "" {
				state += " (" + r.StateReason + ")"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%ds ago\t%d rows\t%s\t%s\n",
				r.Agent, state, r.LastActivityS, r.Rows, dash(r.AgentType), r.Description)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, r := range s.Riders {
			if last := lastOf(r); last != "" {
				fmt.Fprintf(w, "    %s: %s\n", r.Agent, last)
			}
		}
	}
	if shown == 0 {
		fmt.Fprintln(w, noRiders(doc))
	}
	for _, warn := range doc.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

func noRiders(doc *observatory.Document) string {
	if doc.IncludeFinished {
		return "no riders"
	}
	return "no riders riding"
}

func lastOf(r transcript.Rider) string {
	if r.State == transcript.Riding && r.LastStep != "" {
		return r.LastStep
	}
	if r.LastText != "" {
		return r.LastText
	}
	return r.LastStep
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
