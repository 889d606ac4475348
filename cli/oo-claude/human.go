package main

// Every verb's human output is written here, from the library's typed
// results: the listings, the verdict lines, the notes with the CLI's
// hints. The verbs parse flags, call the library and pick the form
// (--json or this one); messages.go holds the one-line errors.

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/doctor"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// doormanState is the one-word doorman state the human listings show: none
// (no heartbeat), the heartbeat's state when it is fresh ("fresh" for a
// contract-v1 doorman without one), else why it is not fresh (its state
// when that is the reason: stopped, switched, ...).
func doormanState(d *inboxv1.Doorman) string {
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
// offline inboxes that hold waiting lines, then the headless starts still
// started or lost.
func writeTree(w io.Writer, doc *observatory.Document) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tNAME\tPID\tSTATUS\tRIDERS\tDOORMAN\tPENDING\tSTARTED")
	if len(doc.Sessions) == 0 {
		fmt.Fprintln(tw, "(no running sessions)")
	}
	for _, n := range doc.Tree() {
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
	if len(doc.Starts) > 0 {
		fmt.Fprintf(w, "\nHeadless starts (%s):\n", "oo-claude start; lost: its supervisor is gone without writing the outcome")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, s := range doc.Starts {
			who := "-"
			if s.SupervisorPID != nil {
				who = fmt.Sprintf("supervisor %d", *s.SupervisorPID)
			}
			if s.Unit != "" {
				who += ", unit " + string(s.Unit)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Session, s.State, who, s.ResultFile)
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

// writeExchanges prints the human form of read: a header, then each
// exchange with its prompt, the tools called, the peer lines absorbed
// (marked with from and msg_id) and the assistant's text.
func writeExchanges(w io.Writer, r transcript.Reading) error {
	state := "offline"
	if r.Running {
		state = fmt.Sprintf("running, pid %d, %s", r.PID, r.Status)
	}
	name := ""
	if r.Name != "" {
		name = " " + r.Name
	}
	fmt.Fprintf(w, "session %s%s (%s)\ntranscript %s\n", r.Session, name, state, r.Transcript)
	if len(r.Exchanges) == 0 {
		_, err := fmt.Fprintln(w, "\n(no exchanges yet)")
		return err
	}
	for _, x := range r.Exchanges {
		who := string(x.Prompt.Kind)
		if p := x.Prompt.Peer; p != nil {
			who = peerMark(*p)
		}
		fmt.Fprintf(w, "\n── %s  %s\n", stamp(x.Start), who)
		fmt.Fprintf(w, "%s\n", indent(x.Prompt.Text, "> "))
		for _, tc := range x.Tools {
			blocked := ""
			if tc.Blocked {
				blocked = " (blocked: not run)"
			}
			fmt.Fprintf(w, "  tool %s: %s%s\n", tc.Name, tc.Input, blocked)
		}
		for _, p := range x.Peers {
			fmt.Fprintf(w, "  %s at %s:\n%s\n", peerMark(p), stamp(p.Timestamp), indent(p.Text, "  | "))
		}
		if x.Assistant != "" {
			fmt.Fprintf(w, "%s\n", indent(x.Assistant, "  "))
		}
		stop := x.StopReason
		if stop == "" {
			stop = "running"
		}
		fmt.Fprintf(w, "  [%s]\n", stop)
	}
	return nil
}

// peerMark names a peer line by its from and msg_id (the msg_id of a send
// receipt matches it).
func peerMark(p transcript.PeerLine) string {
	s := "peer " + p.From
	if p.MsgID != "" {
		s += " msg_id=" + p.MsgID
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

// humanEvent is one readable line per event, e.g.
// "2026-12-01T08:40:00.123Z line-delivered 017c3f59… msg_id=… class=delivered-steer".
func humanEvent(ev observatory.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", ev.TS, ev.Event, shortID(ev.Session))
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", k, v)
		}
	}
	kv("name", ev.Name)
	if ev.PID > 0 {
		kv("pid", fmt.Sprint(ev.PID))
	}
	kv("status", ev.Status)
	kv("doorman", ev.Doorman)
	kv("reason", ev.Reason)
	kv("msg_id", ev.MsgID)
	kv("class", ev.Class)
	kv("agent", ev.Agent)
	if ev.LineOffset != nil {
		kv("line_offset", fmt.Sprint(*ev.LineOffset))
	}
	if ev.Dropped > 0 {
		kv("dropped", fmt.Sprint(ev.Dropped))
	}
	if c := ev.Cost; c != nil {
		if c.USD != nil {
			kv("usd", strconv.FormatFloat(*c.USD, 'f', -1, 64))
		}
		kv("tokens", fmt.Sprint(c.Tokens))
		if c.UnknownModelCost {
			kv("unknown_model_cost", "true")
		}
		if c.Bounded {
			kv("bounded", "true")
		}
	}
	for _, x := range []struct{ k, v string }{{"description", ev.Description}, {"line", ev.Line}, {"text", ev.Text}} {
		if x.v != "" {
			fmt.Fprintf(&b, " %s=%q", x.k, x.v)
		}
	}
	if ev.Initial {
		b.WriteString(" (already so)")
	}
	return b.String()
}

// humanVerdict is the one stdout line of a send: the class and the
// essentials, e.g. "delivered-steer 017c3f59… msg_id=… after 0.6s" (and
// ", seen after 4.1s" with --seen).
func humanVerdict(v claudeinbox.Verdict) string {
	var b strings.Builder
	b.WriteString(string(v.Class))
	if v.SessionID != "" {
		b.WriteString(" " + shortID(v.SessionID))
	} else {
		fmt.Fprintf(&b, " %q", v.Target)
	}
	switch {
	case v.Class.Delivered():
		fmt.Fprintf(&b, " msg_id=%s after %.1fs", v.MsgID, v.Waited.Seconds())
		switch v.Confirm {
		case inboxv1.ConfirmTranscript:
			fmt.Fprintf(&b, ", queued at %s", v.QueuedAt)
		case inboxv1.ConfirmSettle:
			b.WriteString(", unconfirmed (no transcript: acked after the settle)")
		}
		b.WriteString(waitPart(v))
	case v.Class == claudeinbox.Timeout:
		fmt.Fprintf(&b, " line_offset=%d no ack after %.1fs", v.LineOffset, v.Waited.Seconds())
	case v.Class == claudeinbox.Interrupted:
		fmt.Fprintf(&b, " line_offset=%d interrupted (%s) %.1fs into the ack wait", v.LineOffset, v.InterruptedBy, v.Waited.Seconds())
	case v.Written:
		fmt.Fprintf(&b, " line_offset=%d", v.LineOffset)
	}
	if v.Reason != "" {
		fmt.Fprintf(&b, " (%s)", v.Reason)
	}
	return b.String()
}

// waitPart is the seen and reply part of a delivered verdict's line:
// ", seen after 2.9s", ", not seen within 20s", ", session ended after
// 1.1s, no reply", ", interrupted (SIGINT) after 6.0s, not seen", ...
func waitPart(v claudeinbox.Verdict) string {
	var b strings.Builder
	reply := v.ReplyWait > 0
	if v.Seen != nil && *v.Seen {
		fmt.Fprintf(&b, ", seen after %.1fs", v.SeenAfter.Seconds())
	}
	after := v.SeenAfter
	if reply {
		after = v.ReplyAfter
	}
	var cut string
	switch v.WaitEnd {
	case inboxv1.ReasonInterrupted:
		cut = fmt.Sprintf(", interrupted (%s) after %.1fs", v.InterruptedBy, after.Seconds())
	case inboxv1.ReasonSessionEnded:
		cut = fmt.Sprintf(", session ended after %.1fs", after.Seconds())
	}
	switch {
	case v.Seen == nil:
	case cut != "" && !*v.Seen:
		b.WriteString(cut + ", not seen")
	case cut != "" && reply:
		b.WriteString(cut + ", no reply")
	case !*v.Seen:
		fmt.Fprintf(&b, ", not seen within %gs", v.SeenWait.Seconds())
	}
	switch {
	case !reply || cut != "":
	case v.Reply != nil:
		fmt.Fprintf(&b, ", replied after %.1fs", v.ReplyAfter.Seconds())
	default:
		fmt.Fprintf(&b, ", no reply within %gs", v.ReplyWait.Seconds())
	}
	return b.String()
}

// shortID is the first 8 characters of a session id and an ellipsis.
func shortID(id string) string {
	if len(id) <= 8 {
		return id
	}
	return id[:8] + "…"
}

// writeDoctor prints one line per check, then each finding with its fix.
func writeDoctor(e *env, rep doctor.Report) error {
	out := e.human()
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, c := range rep.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Name, c.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nstation %s, station file %s\n", rep.Station, orNone(rep.StationFile))
	for _, k := range rep.Knobs {
		if k.From != station.OriginDefault {
			fmt.Fprintf(out, "  %s=%s (%s)\n", k.Name, k.Value, k.From)
		}
	}
	if rep.OK() {
		_, err := fmt.Fprintln(out, "\nno findings")
		return err
	}
	fmt.Fprintf(out, "\n%d finding(s):\n", len(rep.Findings))
	for _, f := range rep.Findings {
		fmt.Fprintf(out, "- [%s] %s\n  fix: %s\n", f.Kind, f.Message, f.Fix)
	}
	return nil
}

func printResume(e *env, res headless.ResumeResult, err error) {
	switch res.Class {
	case headless.DeliveredResume:
		if res.Claude.Result != nil {
			fmt.Fprintln(e.human(), strings.TrimRight(*res.Claude.Result, "\n"))
		}
		fmt.Fprintf(e.stderr, "oo-claude: delivered-resume: %s (%d turn(s), %.4f USD)\n", res.SessionID, max(len(res.Turns), 1), res.Claude.TotalCostUSD)
	case headless.HeldBySession:
		fmt.Fprintf(e.stderr, "oo-claude: %s\n", heldMessage(res))
	case headless.Refused:
		cfg, _ := e.config()
		fmt.Fprintf(e.stderr, "oo-claude: %s\n", refusedMessage(err, res.SessionID, cfg.ProjectsDir))
	default:
		msg := res.Reason
		if res.Parsed && res.Claude.Subtype != "" {
			msg += fmt.Sprintf(" (subtype %s, terminal_reason %s, %.4f USD)", res.Claude.Subtype, res.Claude.TerminalReason, res.Claude.TotalCostUSD)
		}
		fmt.Fprintf(e.stderr, "oo-claude: %s: %s\n", res.Class, msg)
		if res.StderrTail != "" {
			fmt.Fprintf(e.stderr, "oo-claude: claude stderr:\n%s\n", res.StderrTail)
		}
	}
	if res.Note != "" {
		fmt.Fprintf(e.stderr, "oo-claude: note: %s\n", res.Note)
	}
}

// writeVerdict is send's stdout: the verdict line, then the answer when
// --reply got one.
func writeVerdict(w io.Writer, v claudeinbox.Verdict) {
	fmt.Fprintln(w, humanVerdict(v))
	if v.Reply != nil {
		fmt.Fprintln(w, v.Reply.Text)
	}
}

// printSendNotes is what send says on stderr beside either form: the note
// (with the CLI's hints), the hint and a receipt that was not written.
func printSendNotes(e *env, v claudeinbox.Verdict) {
	for _, x := range []struct{ label, text string }{
		{"note", sendNote(v)}, {"hint", v.Hint}, {"receipt not written", v.ReceiptWriteError},
	} {
		if x.text != "" {
			fmt.Fprintf(e.stderr, "oo-claude: %s: %s\n", x.label, x.text)
		}
	}
}

// printStart is the human form of start: the detached unit, or the
// result on stdout and the class on stderr, then the result file's note.
func printStart(e *env, res headless.StartResult, err error) {
	f := res.File
	switch res.Class {
	case headless.Started:
		d := res.Detached()
		fmt.Fprintf(e.stdout, "started %s as unit %s; result file %s\n", d.SessionID, d.Unit, d.ResultFile)
	case headless.Completed:
		if f.Result != nil {
			fmt.Fprintln(e.human(), strings.TrimRight(*f.Result, "\n"))
		}
		fmt.Fprintf(e.stderr, "oo-claude: completed: %s; result file %s\n", f.SessionID, f.ResultFile)
	case headless.Refused:
		fmt.Fprintf(e.stderr, "oo-claude: %s\n", refusedMessage(err, "", ""))
	default:
		fmt.Fprintf(e.stderr, "oo-claude: %s: %s", res.Class, res.Reason)
		if f.ResultFile != "" {
			fmt.Fprintf(e.stderr, "; result file %s", f.ResultFile)
		}
		fmt.Fprintln(e.stderr)
	}
	if f.Note != nil {
		fmt.Fprintf(e.stderr, "oo-claude: note: %s\n", *f.Note)
	}
}

// writeRegistered is lineage register's line: "registered: child <- parent".
func writeRegistered(w io.Writer, res lineage.Result) error {
	verb := "registered"
	if !res.Appended {
		verb = "already registered"
	}
	_, err := fmt.Fprintf(w, "%s: %s <- %s\n", verb, res.Row.ChildSession, parentOf(res.Row))
	return err
}

// writeLinks is lineage show's listing: one line per child, or where the
// ledger is when it holds none.
func writeLinks(w io.Writer, links []lineage.Row, ledger string) error {
	if len(links) == 0 {
		_, err := fmt.Fprintf(w, "no lineage recorded yet in %s (oo-claude start records the sessions it starts; oo-claude lineage register records a parent by hand)\n", ledger)
		return err
	}
	for _, r := range links {
		title := ""
		if r.Title != "" {
			title = "  " + r.Title
		}
		if _, err := fmt.Fprintf(w, "%s <- %s  (by %s, %s)%s\n", r.ChildSession, parentOf(r), r.By, r.TS, title); err != nil {
			return err
		}
	}
	return nil
}

func parentOf(r lineage.Row) string {
	switch {
	case r.ParentSession != nil && r.ParentHost != nil:
		return *r.ParentSession + " (" + *r.ParentHost + ")"
	case r.ParentSession != nil:
		return *r.ParentSession
	case r.ParentHost != nil:
		return *r.ParentHost
	}
	return "?"
}

// printGC is gc's human form: each file removed (or that would be) on
// stdout, each inbox that failed on stderr. It reports whether one failed.
func printGC(e *env, items []observatory.GCItem) (failed bool) {
	for _, it := range items {
		switch it.Why {
		case observatory.GCRemoved, observatory.GCWouldRm:
			for _, f := range it.Files {
				fmt.Fprintf(e.stdout, "%s %s\n", it.Why, f)
			}
			if it.Pending > 0 && it.Detail != "" {
				// Lines for a session id nothing knows: say they went.
				fmt.Fprintf(e.stderr, "oo-claude: %s: %s\n", it.Session, it.Detail)
			}
		case observatory.GCRmFailed, observatory.GCUnread:
			failed = true
			fmt.Fprintf(e.stderr, "oo-claude: %s: %s\n", it.Session, it.Detail)
		}
	}
	return failed
}

// versionLine is version's human form.
func versionLine() string {
	return fmt.Sprintf("oo-claude %s (%s, proven against Claude Code %s)", version.Version, runtime.Version(), version.ProvenAgainst)
}

// printReceiptError is the stderr line of a resume or start whose receipt
// could not be written (msg nil: it was).
func printReceiptError(e *env, msg *string) {
	if msg != nil {
		fmt.Fprintf(e.stderr, "oo-claude: receipt not written: %s\n", *msg)
	}
}

// printWhy is the stderr line beside a resume's or start's --json row when
// the run failed: the class and why.
func printWhy(e *env, class headless.Class, reason string) {
	fmt.Fprintf(e.stderr, "oo-claude: %s: %s\n", class, reason)
}

// orNone is s, or "(none)" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
