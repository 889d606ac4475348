package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/receipt"
)

// ErrBadOutput is matched when a remote verb printed something that is not
// its --json form (another program at the remote path, an old oo-claude).
var ErrBadOutput = errors.New("remote oo-claude printed no usable JSON")

// Sessions returns the station's oo-claude/sessions/v0 document
// (`oo-claude sessions --json`; all adds --all).
func (h Host) Sessions(ctx context.Context, all bool) (*observatory.Document, error) {
	args := []string{"sessions", "--json"}
	if all {
		args = append(args, "--all")
	}
	res, err := h.Run(ctx, args, nil)
	if err != nil {
		return nil, err
	}
	if res.Exit != 0 {
		return nil, fmt.Errorf("%s: oo-claude sessions exit %d: %s", h.Dest, res.Exit, lastLines(res.Stderr))
	}
	var doc observatory.Document
	if err := json.Unmarshal(res.Stdout, &doc); err != nil || doc.Schema != observatory.Schema {
		return nil, fmt.Errorf("%s: %w: %.200q", h.Dest, ErrBadOutput, res.Stdout)
	}
	return &doc, nil
}

// SendRequest is one line for a session on the station, with send's flags
// (zero values leave the remote station's defaults).
type SendRequest struct {
	Target   string
	Line     string
	From     string
	NoTag    bool
	Priority string
	// ExpectStart is send's --expect-start: a full id no station knows yet
	// is queued for a session about to start with it.
	ExpectStart bool
	// Wait, Seen, Reply and MinInterval are send's --wait, --seen,
	// --reply and --min-interval when positive (MinInterval: when set).
	Wait, Seen, Reply time.Duration
	MinInterval       *time.Duration
}

// SendResult is a remote send's outcome: the rows it printed (the ack row
// first when a seen or reply wait followed it; the last is the verdict)
// and its exit code (the class's, as the local send's).
type SendResult struct {
	Ack     *receipt.SendRow // the ack row, nil when none came before the verdict
	Verdict receipt.SendRow
	Exit    int
	Stderr  string
}

// Send sends req.Line to a session on the station (`oo-claude send TARGET -
// --json`, the line on stdin). onAck, when not nil, gets the ack row as
// soon as it arrives. A call that ctx ends is an *SSHError matching
// ctx.Err(). A connection that drops (or a ctx that ends) after the ack
// row is an *SSHError next to a result whose Ack is set: the line was
// delivered, and `receipt MSG_ID` on the station gives its final row; one
// after the verdict row is an *SSHError next to a result whose Verdict is
// set (its Class not empty): the verdict stands, the exit code is lost.
func (h Host) Send(ctx context.Context, req SendRequest, onAck func(receipt.SendRow)) (SendResult, error) {
	args := []string{"send", "--json"}
	if req.From != "" {
		args = append(args, "--from", req.From)
	}
	if req.NoTag {
		args = append(args, "--no-tag")
	}
	if req.ExpectStart {
		args = append(args, "--expect-start")
	}
	if req.Priority != "" {
		args = append(args, "--priority", req.Priority)
	}
	secs := func(flag string, d time.Duration) {
		args = append(args, flag, fmt.Sprintf("%g", d.Seconds()))
	}
	if req.Wait > 0 {
		secs("--wait", req.Wait)
	}
	if req.Seen > 0 {
		secs("--seen", req.Seen)
	}
	if req.Reply > 0 {
		secs("--reply", req.Reply)
	}
	if req.MinInterval != nil {
		secs("--min-interval", *req.MinInterval)
	}
	args = append(args, "--", req.Target, "-")
	var out SendResult
	var got []receipt.SendRow
	rows := &rowWriter{onRow: func(r receipt.SendRow) {
		got = append(got, r)
		if len(got) == 1 && onAck != nil && r.Delivered && (req.Seen > 0 || req.Reply > 0) {
			onAck(r)
		}
	}}
	res, err := h.stream(ctx, args, strings.NewReader(req.Line+"\n"), rows)
	out.Exit, out.Stderr = res.Exit, lastLines(res.Stderr)
	switch {
	case len(got) == 1 && err != nil && got[0].Delivered && (req.Seen > 0 || req.Reply > 0):
		out.Ack = &got[0] // the drop came during the wait
	case len(got) >= 1:
		out.Verdict = got[len(got)-1]
		if len(got) > 1 {
			out.Ack = &got[0]
		}
	}
	if err != nil {
		return out, err
	}
	if len(out.Verdict.Class) == 0 {
		return out, fmt.Errorf("%s: oo-claude send exit %d: %w: %s", h.Dest, res.Exit, ErrBadOutput, out.Stderr)
	}
	return out, nil
}

// rowWriter parses complete JSON lines of send rows as they arrive. Each
// write's bytes are scanned once, never the line held so far (a remote
// that prints a long line in many writes would make that quadratic); a
// line longer than maxOutput is dropped whole, up to its newline.
type rowWriter struct {
	buf   []byte // the line so far
	skip  bool   // the line so far was over maxOutput
	onRow func(receipt.SendRow)
}

func (w *rowWriter) Write(p []byte) (int, error) {
	n := len(p)
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		line := p[:i]
		if len(w.buf) > 0 {
			line = append(w.buf, line...)
		}
		if !w.skip && len(line) <= maxOutput {
			w.row(line)
		}
		w.buf, w.skip, p = w.buf[:0], false, p[i+1:]
	}
	if w.skip || len(w.buf)+len(p) > maxOutput {
		w.buf, w.skip = nil, true
	} else {
		w.buf = append(w.buf, p...)
	}
	return n, nil
}

// row hands one line to onRow when it is a send row.
func (w *rowWriter) row(line []byte) {
	var r receipt.SendRow
	if json.Unmarshal(line, &r) != nil || r.Class == "" {
		return
	}
	w.onRow(r)
}

// stream is Run with stdout handed to w as it comes.
func (h Host) stream(ctx context.Context, args []string, stdin io.Reader, w io.Writer) (Result, error) {
	name, argv := h.sshArgs(ctx, args)
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.SysProcAttr = dieWithParent()
	cmd.Stdin = stdin
	errb := boundedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = w, &errb
	err := cmd.Run()
	res := Result{Stderr: errb.b.Bytes()}
	res.Exit, err = h.sshEnd(ctx, err, res.Stderr)
	return res, err
}

// MergeSessions asks every host for its document at once and returns one
// document: every session carries its station (the host's Name), and every
// station is listed in Stations with its error when it did not answer
// (never dropped silently); the error names the stations that failed.
func MergeSessions(ctx context.Context, hosts []Host, all bool) (*observatory.Document, error) {
	docs := make([]*observatory.Document, len(hosts))
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			docs[i], errs[i] = h.Sessions(ctx, all)
		}()
	}
	wg.Wait()
	m := &observatory.Document{Schema: observatory.Schema, Sessions: []observatory.Session{}, OfflineInboxes: []observatory.OfflineInbox{}, Warnings: []string{}, Generator: "oo-claude fleet", IncludeFinished: all}
	var names []string
	var failed []error
	for i, h := range hosts {
		names = append(names, h.Name())
		st := observatory.StationState{Station: h.Name()}
		if errs[i] != nil {
			st.Error = errs[i].Error()
			failed = append(failed, errs[i])
			m.Warnings = append(m.Warnings, st.Error)
			m.Stations = append(m.Stations, st)
			continue
		}
		d := docs[i]
		st.Name = d.Station
		m.Stations = append(m.Stations, st)
		if d.GeneratedAt > m.GeneratedAt {
			m.GeneratedAt = d.GeneratedAt
		}
		m.RidingWindowS = d.RidingWindowS
		for _, s := range d.Sessions {
			s.Station = h.Name()
			m.Sessions = append(m.Sessions, s)
		}
		m.OfflineInboxes = append(m.OfflineInboxes, d.OfflineInboxes...)
		for _, w := range d.Warnings {
			m.Warnings = append(m.Warnings, h.Name()+": "+w)
		}
	}
	m.Station = strings.Join(names, ",")
	return m, errors.Join(failed...)
}
