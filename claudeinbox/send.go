package claudeinbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// ackPoll is the ack wait's timer where no file watch could be set up (it
// then looks every tenth of it); file events wake the wait, a lost event
// too.
const ackPoll = time.Second

// Errors of a Sender that cannot send at all. ErrNoStation is also what
// observatory's Build, Watch and GC return for options without a station.
var (
	ErrNoStation = errors.New("no station")
	ErrBadOption = errors.New("bad sender option")
)

// ErrRefused matches (errors.Is) the error of every send whose verdict is
// [Refused]; errors.As with a *[RefusedError] gives its reason and cause.
var ErrRefused = errors.New("refused")

// RefusedError is the error [Sender.Send] returns next to a [Refused]
// verdict. Reason is the verdict's: a program branches on it (a line that
// breaks a line rule, a bad sender name or priority, an untrusted inbox, a
// line the doorman refused). Err is the cause where there is one to match:
// the target's *station.TargetError (matching station.ErrUnknownTarget,
// ErrAmbiguousTarget or ErrBadTarget), an *fs.PathError (Op "send append")
// for a file that could not be written, [ErrBadOption], [ErrNoStation], the error of the
// line rule it breaks (its text names the rule), or nil for a line the
// doorman refused (Reason is then the ack's reason).
type RefusedError struct {
	Reason inboxv1.Reason // Verdict.Reason
	Err    error
}

func (e *RefusedError) Error() string {
	if e.Err == nil {
		return "send refused: " + string(e.Reason)
	}
	return "send refused (" + string(e.Reason) + "): " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *RefusedError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrRefused] or the refusal's Reason.
func (e *RefusedError) Is(target error) bool {
	r, ok := target.(inboxv1.Reason)
	return target == ErrRefused || ok && r == e.Reason
}

// Sender sends lines to sessions' inboxes. Build one with [NewSender] from
// the knobs, or fill the fields; a Sender is safe for concurrent use, also
// by many processes at once.
type Sender struct {
	// Station resolves targets and checks process liveness. Required.
	Station *station.Station
	// InboxDir holds the inbox files; "" means Station.Paths.InboxDir.
	InboxDir string
	// StateDir holds the throttle ledger; "" means Station.Paths.StateDir.
	StateDir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Wait is how long Send waits for the doorman's ack once the heartbeat
	// is fresh. 0 looks once and does not wait. The contract's default (5 s,
	// OO_CLAUDE_WAIT_S) comes with [NewSender]; negative is [ErrBadOption].
	Wait time.Duration
	// MinInterval is the throttle per (target session, sender), the
	// sender being the line's own tag when it carries one, else
	// Request.From. 0 disables it. The contract's default (30 s,
	// OO_CLAUDE_MIN_INTERVAL_S) comes with [NewSender]; negative is
	// [ErrBadOption].
	MinInterval time.Duration
	// Receipts gets one row per Send; nil writes none.
	Receipts *receipt.Writer
	// ClientVersion is the sending program's version, the receipts'
	// client_version (the CLI puts its own there); "" writes null.
	ClientVersion string
	// SeenWait is how long Send waits, after a delivered-* verdict, for
	// the session's transcript to show the line (Verdict.Seen): the proof
	// that the model saw it. 0 does not wait; a positive wait needs a
	// Witness; negative is [ErrBadOption]. The class is the same either
	// way.
	SeenWait time.Duration
	// Witness reads the transcript for SeenWait and ReplyWait;
	// transcript.Witness is the real one, which [NewSender] sets.
	Witness Witness
	// ReplyWait is how long Send waits, after a delivered-* verdict, for
	// the model to take the line and answer it (Verdict.Reply): the seen
	// wait and the reply wait share this one budget, so a positive
	// ReplyWait implies SeenWait's proof. 0 does not wait; a positive wait
	// needs a Witness that is a [ReplyWitness]; negative is
	// [ErrBadOption]. The class is the same either way.
	ReplyWait time.Duration
	// StationName names this station in the verdict and its receipt (the
	// row's station key); "" writes null.
	StationName string
	// OnAck, when set, is called with the verdict as it stands once the
	// ack is known and a seen or reply wait follows (its Seen and Reply
	// not known yet), so a caller can report the delivery before the
	// wait ends; Send's returned verdict is the final one.
	OnAck func(Verdict)
	// BeforeWrite, when set, is called once by a Send that gets as far as
	// writing, just before it writes anything of its own (the throttle's
	// ledger, then the line): the steps before it read, but for the
	// advisory row cache a Station may replace in its state directory. A
	// program that installs a signal handler beside those reads waits
	// for it there, so no line goes out before the handler can report on
	// it (oo-claude does). A ctx ended by the time BeforeWrite returns
	// ends the send with nothing written. Concurrent Sends call it
	// concurrently.
	BeforeWrite func()
}

// NewSender returns a Sender for the station the config describes, with
// the config's wait, throttle and receipts file, and the station's
// transcript witness (transcript.Witness over its projects directory), so
// a SeenWait, ReplyWait or Request.Waits needs no further set-up. The
// receipts carry no client version until the caller sets ClientVersion.
func NewSender(c station.Config) *Sender {
	return &Sender{
		Station:     station.New(c.Paths),
		InboxDir:    c.InboxDir,
		StateDir:    c.StateDir,
		Wait:        c.Wait,
		MinInterval: c.MinInterval,
		Receipts:    &receipt.Writer{Path: c.ReceiptsFile()},
		Witness:     transcript.Witness{ProjectsDir: c.Paths.ProjectsDir},
	}
}

// Request is one line for one session.
type Request struct {
	// Target names the session: a full id (also of a session that is not
	// running), a pid, an exact name, a unique name fragment (≥ 4
	// characters) or a unique id prefix (≥ 8). A full id whose doorman's
	// heartbeat names its claude process resolves to that process's
	// registry row (the process whose door takes the line).
	Target string
	// Line is the message, one line.
	Line string
	// From is the sender name; "" means "oo-claude".
	From string
	// NoTag leaves the line as it is. Otherwise the line gets the tag
	// "[From 📡] " unless it already carries a sender tag or is a
	// structured (JSON) line.
	NoTag bool
	// Priority is when the receiver shows the line: PriorityNow (at once:
	// the receiver aborts the running tool), PriorityNext (the default: at the
	// next tool round, or a new turn when idle) or PriorityLater (a turn
	// of its own after the running one: for a sender that must not
	// interrupt a busy session). A line with now or later is written in
	// the structured form with the extension key "priority" (the doorman
	// tags a structured line's text with its from, so NoTag does not keep
	// such a line untagged); "" and next leave the line as v1 writes it.
	// Anything else is refused ([inboxv1.ReasonBadPriority]).
	Priority string
	// ExpectStart queues a line for a full id that names no live session
	// and no transcript on this station: a session about to be started
	// with that id (headless.Start's SessionID). Without it such a send is
	// refused ([inboxv1.ReasonUnknownSession]): a mistyped id would strand the
	// line, since no doorman, resume or gc would ever take it.
	ExpectStart bool
	// Waits, when set, are this call's waits in place of the Sender's
	// Wait, SeenWait and ReplyWait (all three: start from
	// [Sender.Waits]), so one Sender serves calls that wait differently.
	// The rules are the Sender's fields': negative is [ErrBadOption], a
	// seen or reply wait needs the Sender's Witness. nil means the
	// Sender's.
	Waits *Waits
}

// DoormanStatus is what the heartbeat said when Send read it.
type DoormanStatus struct {
	Fresh bool
	PID   int
	// Age is now − last_seen; 0 when unknown.
	Age time.Duration
	// State is the heartbeat's state, the string of one of package
	// doorman's State constants (following, standby, stopped, ...); ""
	// when it has none.
	State string
	// NotFreshBecause is why the heartbeat is not fresh, one of the
	// ReasonHeartbeat... and ReasonDoorman... reasons; "" when Fresh.
	NotFreshBecause inboxv1.Reason
	// LastError is the heartbeat's last_error as the doorman wrote it:
	// why lines are pending, or its last failure; "" when it has none.
	// For a [Timeout] verdict it is read again when the wait ends.
	LastError string
	// Pending is the reason LastError starts with when it says why the
	// doorman holds lines back ([inboxv1.ReasonReceiverDidNotQueue],
	// [inboxv1.ReasonAckUnwritable], [inboxv1.ReasonBadToken],
	// [inboxv1.ReasonAttemptUnwritable]); "" otherwise.
	Pending inboxv1.Reason
}

// setLastError records the heartbeat's last_error and the pending reason
// it starts with.
func (d *DoormanStatus) setLastError(e string) {
	d.LastError, d.Pending = e, ""
	for _, r := range [...]inboxv1.Reason{inboxv1.ReasonReceiverDidNotQueue, inboxv1.ReasonAckUnwritable, inboxv1.ReasonBadToken, inboxv1.ReasonAttemptUnwritable} {
		if e == string(r) || strings.HasPrefix(e, string(r)+":") {
			d.Pending = r
			return
		}
	}
}

// Verdict is everything a send found out: the class and every fact the
// receipt row carries.
type Verdict struct {
	Class  Class
	Target string // as the caller gave it

	// SessionID is the resolved session; "" when the target did not resolve.
	SessionID string
	Name      string // registry name, running sessions only
	PID       int    // claude pid, running sessions only
	Running   bool
	Status    string // registry status, running sessions only

	From   string // the sender (the line's own tag wins over Request.From)
	Line   string // the final line (tagged, or structured with its priority), or the refused line
	SHA256 string // of Line's bytes
	Bytes  int
	Inbox  string // the inbox file, once the target resolved
	// Priority is the line's priority: now, next or later.
	Priority string

	// Written reports that the line is in the inbox at LineOffset.
	Written    bool
	LineOffset int64

	// Doorman is the heartbeat read after the append; nil when none was
	// read (not running, or the send ended before).
	Doorman *DoormanStatus
	// ack is the doorman's ack for this line, when one came: the
	// receipt's ack.
	ack        *inboxv1.Ack
	PeerStatus string
	MsgID      string
	// Confirm is the ack's confirm: "transcript" when the doorman saw
	// the receiver's enqueue row for the line, "settle" when it
	// could not locate the transcript and acked after the settle; "" when
	// no delivered ack came (or an older doorman's ack has none).
	Confirm string
	// QueuedAt is the ack's queued_at, the enqueue row's timestamp; ""
	// when none was seen.
	QueuedAt string
	// Waited is how long Send waited for the ack; it waits only when the
	// heartbeat is fresh (Doorman.Fresh).
	Waited      time.Duration
	Wait        time.Duration
	MinInterval time.Duration
	// RetryAfter is, for a [Dropped] verdict, how long until the throttle
	// admits this sender's next line to the session; 0 otherwise.
	RetryAfter time.Duration

	// Seen is whether the session's transcript showed a row with the ack's
	// msg_id within SeenWait; nil when the proof was not asked for
	// (Sender.SeenWait 0) or the line was not delivered.
	Seen *bool
	// SeenAfter is how long Send watched the transcript after the ack:
	// until the row came, or SeenWait when it did not.
	SeenAfter time.Duration
	SeenWait  time.Duration
	// Transcript is the transcript that was watched.
	Transcript string
	// TranscriptOffset is where the seen or reply wait started reading
	// Transcript: its size before the line was appended. A program that
	// reads the reply later passes it to transcript.ReadReply as
	// ReplyOptions.From, so only rows written after the send are read.
	// It is 0 when no wait ran (Seen nil, or the transcript could not be
	// watched: the receipt's transcript_offset is null then).
	TranscriptOffset int64
	// waited reports that the wait read Transcript from TranscriptOffset.
	waited bool

	// Reply is the session's answer to the line, when Sender.ReplyWait
	// asked for it and it was complete within the wait; nil otherwise.
	Reply *receipt.Reply
	// ReplyAfter is how long Send waited after the ack for the reply:
	// until it was complete, or ReplyWait when it was not.
	ReplyAfter time.Duration
	ReplyWait  time.Duration
	// WaitEnd is why the seen or reply wait ended without the row or the
	// answer it waited for: [inboxv1.ReasonWaitTimeout], [inboxv1.ReasonSessionEnded] (the
	// session ended while Send waited: the wait ends with it),
	// [inboxv1.ReasonInterrupted] (ctx ended) or [inboxv1.ReasonIO] (the transcript could
	// not be watched or read); "" when it got what it waited for or no
	// wait ran. The class is the same either way.
	WaitEnd inboxv1.Reason
	// InterruptedBy names what cut a wait of the send short (for the ack:
	// an [Interrupted] verdict; for the row or the reply: WaitEnd
	// [inboxv1.ReasonInterrupted]), or stopped the send before its line was
	// written ([inboxv1.ReasonCanceled]): the signal's name ("SIGINT", "SIGTERM")
	// when context.Cause(ctx) has a method Signal() os.Signal, else
	// "canceled" or "deadline-exceeded". "" when nothing did.
	InterruptedBy string

	Reason inboxv1.Reason // why refused, queued-no-doorman or dropped
	Note   string         // advice for a human
	Hint   string         // the command to run next

	ClientVersion string
	// Station is the Sender's StationName.
	Station string
	// At is when the verdict was reached (the receipt's ts).
	At time.Time
	// ReceiptWriteError is set when the receipt could not be written; the
	// verdict stands regardless.
	ReceiptWriteError string
}

// Send appends req's line to the target's inbox and returns the verdict
// (see the package doc for the steps).
//
// The error says what a program may branch on; the verdict says the rest:
//   - every [Refused] verdict comes with a *[RefusedError] (errors.Is
//     [ErrRefused]) whose Reason says why ([inboxv1.ReasonNewline],
//     [inboxv1.ReasonSymlink], ...) and which wraps the cause: a bad target
//     matches station.ErrUnknownTarget or ErrAmbiguousTarget, and so on;
//     a nil ctx is refused with [ErrBadOption] and a Sender without a
//     Station with [ErrNoStation], before anything is written;
//   - a ctx that has ended before Send starts writes nothing at all (no
//     line, no throttle entry, no receipt) and returns ctx's error itself
//     (err == context.Canceled) with a Refused verdict of reason
//     [inboxv1.ReasonCanceled];
//   - a ctx that ends while Send waits for the ack returns ctx's error
//     itself (err == context.Canceled) next to an [Interrupted] verdict:
//     the line is written and waits, do not resend it. During the seen or
//     reply wait it is ctx's error too, next to what the wait had found
//     (Verdict.WaitEnd [inboxv1.ReasonInterrupted]), and the class stays
//     delivered. Verdict.InterruptedBy names the signal when ctx's cause
//     has a method Signal() os.Signal;
//   - a session that ends during the seen or reply wait (its process
//     exits, its registry row goes, it switches to another id) ends the
//     wait within moments, with Verdict.WaitEnd [inboxv1.ReasonSessionEnded] and
//     a nil error; the class stays delivered;
//   - a Witness that fails during the seen or reply wait is an *fs.PathError
//     of Op "send seen" or "send reply", and the class stays delivered;
//   - a line written whose throttle ledger could not be updated returns an
//     *fs.PathError of Op "send throttle" next to the line's verdict;
//   - [Dropped], the queued classes and a plain Timeout are nil: the class
//     says it all (a Dropped verdict's RetryAfter says when to resend).
//
// A receipt that cannot be written sets Verdict.ReceiptWriteError and never
// changes the verdict or the error.
func (s *Sender) Send(ctx context.Context, req Request) (Verdict, error) {
	s = s.forCall(req.Waits)
	if ctx == nil {
		err := &RefusedError{Reason: inboxv1.ReasonBadOption, Err: fmt.Errorf("%w: nil context", ErrBadOption)}
		v := Verdict{Target: req.Target, Line: req.Line, ClientVersion: s.ClientVersion, At: s.now()}
		v.refuse(inboxv1.ReasonBadOption, err.Err.Error())
		return v, err
	}
	if err := ctx.Err(); err != nil {
		v := Verdict{Target: req.Target, Line: req.Line, ClientVersion: s.ClientVersion, At: s.now()}
		v.refuse(inboxv1.ReasonCanceled, "the send was cancelled before anything was written")
		v.InterruptedBy = interruptedBy(ctx)
		return v, err
	}
	v, err := s.send(ctx, req)
	if v.Class == Refused && v.Reason != inboxv1.ReasonCanceled {
		var re *RefusedError
		if !errors.As(err, &re) {
			err = &RefusedError{Reason: v.Reason, Err: err}
		}
	}
	v.At = s.now()
	if s.Receipts != nil {
		if werr := s.Receipts.Append(v.Row()); werr != nil {
			v.ReceiptWriteError = werr.Error()
		}
	}
	return v, err
}

// inboxDir is the directory of the inbox files.
func (s *Sender) inboxDir() string {
	if s.InboxDir != "" {
		return s.InboxDir
	}
	return s.Station.Paths.InboxDir
}

// stateDir is the directory of the throttle ledger.
func (s *Sender) stateDir() string {
	if s.StateDir != "" {
		return s.StateDir
	}
	return s.Station.Paths.StateDir
}

func (s *Sender) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (v *Verdict) refuse(reason inboxv1.Reason, note string) {
	v.Class, v.Reason, v.Note = Refused, reason, note
}

// checkQueue refuses, before anything is written, a line whose inbox no
// doorman would ever follow: a full id that names no live session and has
// no transcript on this station (a mistyped id: resume could never
// deliver it), unless req.ExpectStart says a session with this id is
// about to be started; and a live session whose doorman follows another
// inbox directory than this sender's (a knob that differs between the
// session and the sender's environment). A live session whose heartbeat
// in this sender's inbox directory is fresh is followed here, and is not
// looked up further.
//
// hb is the heartbeat as read a moment before (resolving a full id),
// nil when none was read: then checkQueue reads it.
func (s *Sender) checkQueue(v *Verdict, req Request, t station.Target, files inboxv1.Files, hb *inboxv1.Heartbeat) error {
	if !t.Running {
		if req.ExpectStart || !transcriptfile.Absent(s.Station.Paths.ProjectsDir, t.SessionID) {
			return nil
		}
		v.refuse(inboxv1.ReasonUnknownSession, fmt.Sprintf("no running session and no transcript on this station has the id %s (a mistyped id?): nothing was written; a line for a session about to be started with this id is queued with Request.ExpectStart", t.SessionID))
		v.Hint = "oo-claude sessions"
		return &station.TargetError{Target: req.Target, Err: station.ErrUnknownTarget}
	}
	alive := func(pid int) bool { return s.Station.Proc.Alive(pid, "") }
	var fr inbox.Freshness
	if hb != nil {
		fr = inbox.CheckFreshness(*hb, s.now(), t.SessionID, alive)
	} else {
		_, fr = inbox.HeartbeatFreshness(files.Heartbeat, s.now(), t.SessionID, alive)
	}
	if fr.Fresh {
		return nil
	}
	f := FollowedInbox(s.Station.Proc, *t.Session, filepath.Dir(files.Inbox))
	if !f.Elsewhere {
		return nil
	}
	mine := filepath.Dir(files.Inbox)
	v.refuse(inboxv1.ReasonInboxDirMismatch, fmt.Sprintf("the session's doorman (pid %d) follows the inbox directory %s, and this sender writes to %s (the inbox directory knob differs between the session and this sender): nothing was written; send with the doorman's inbox directory", f.DoormanPID, f.Dir, mine))
	v.Hint = "export OO_CLAUDE_INBOX_DIR=" + shellQuote(f.Dir)
	return fmt.Errorf("%w: the doorman follows %s, not %s", ErrInboxDirMismatch, f.Dir, mine)
}

// ErrInboxDirMismatch is the cause of a send refused with
// [inboxv1.ReasonInboxDirMismatch]: the session's doorman follows another inbox
// directory than the sender's.
var ErrInboxDirMismatch = errors.New("the doorman follows another inbox directory")

// shellQuote quotes s for a POSIX shell when it holds anything but the
// characters a path usually has.
func shellQuote(s string) string {
	for _, c := range s {
		if !(c == '/' || c == '.' || c == '-' || c == '_' || c == '+' || c == ',' || c == ':' || c == '@' ||
			'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// withPriority returns line carrying priority p: a now or later line in
// the structured form with the extension key, anything else as it is. A
// structured line keeps every key it has, unknown ones included, in its
// order and with its values as written; only the priority key is set (in
// the place of the first when the line has some: keys are matched without
// regard to case, as the reader does) and, when the line has no version or
// a null one, the contract's is put first. It also returns the priority the line now
// carries.
func withPriority(line, p string) (string, string) {
	st, structured := inbox.ParseStructured([]byte(line))
	if p == "" || p == "next" {
		if structured {
			return line, inbox.PriorityOf(st.Priority)
		}
		return line, inboxv1.PriorityNext
	}
	if structured {
		if out, ok := setPriority(line, p); ok {
			return out, p
		}
	}
	st = inbox.Structured{V: inboxv1.Version, Line: line}
	if tf, ok := inbox.SenderTag(line); ok {
		st.From = inbox.SanitizeFrom(tf)
	}
	st.Priority = p
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(st)
	return strings.TrimSuffix(b.String(), "\n"), p
}

// setPriority rewrites the JSON object line with its priority key set to
// p, every other member kept as written (see withPriority). It reports
// false when line is not one JSON object.
func setPriority(line, p string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	type member struct {
		key string
		val json.RawMessage
	}
	var members []member
	hasV := false
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return "", false
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return "", false
		}
		if strings.EqualFold(key, "v") && string(val) != "null" {
			hasV = true
		}
		members = append(members, member{key, val})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return "", false
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", false
	}
	prio := jsonString(p)
	var b strings.Builder
	b.WriteByte('{')
	sep := func() {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
	}
	if !hasV {
		fmt.Fprintf(&b, `"v":%d`, inboxv1.Version)
	}
	wrote := false
	for _, m := range members {
		switch {
		case strings.EqualFold(m.key, "v") && !hasV:
			continue // a null version: the contract's is written first
		case strings.EqualFold(m.key, "priority"):
			if wrote {
				continue
			}
			m.val, wrote = prio, true
		}
		sep()
		b.Write(jsonString(m.key))
		b.WriteByte(':')
		b.Write(m.val)
	}
	if !wrote {
		sep()
		b.WriteString(`"priority":`)
		b.Write(prio)
	}
	b.WriteByte('}')
	return b.String(), true
}

// jsonString is s as a JSON string, HTML characters not escaped.
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// joinErr is errors.Join that hands a lone error back as it is, so a
// context's error stays comparable with ==.
func joinErr(a, b error) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return errors.Join(a, b)
}

// refuseFile refuses v because of what sits at the inbox (or its
// directory) and returns the error for the caller.
func (s *Sender) refuseFile(v *Verdict, inbox string, err error) error {
	switch {
	case errors.Is(err, fsx.ErrSymlink):
		v.refuse(inboxv1.ReasonSymlink, fmt.Sprintf("%v: a symlink sits where the inbox %s or one of its files should be; remove it and send again", err, inbox))
	case errors.Is(err, fsx.ErrNotRegular):
		v.refuse(inboxv1.ReasonNotRegular, fmt.Sprintf("%v: a FIFO, socket, device or directory sits where the inbox %s or its files should be; remove it and send again", err, inbox))
	case errors.Is(err, fsx.ErrUntrusted):
		v.refuse(inboxv1.ReasonUntrusted, err.Error())
	default:
		v.refuse(inboxv1.ReasonIO, err.Error())
	}
	return pathError("append", inbox, err)
}

// pathError is a send that failed on a file: an *fs.PathError whose Op
// names the step ("send append", "send throttle", "send seen", "send
// reply"), the file and why.
func pathError(op, path string, err error) error {
	return &fs.PathError{Op: "send " + op, Path: path, Err: err}
}

// lineReason is the reason of the line rule err breaks (the one table,
// inbox.LineReason).
func lineReason(err error) inboxv1.Reason { return inboxv1.Reason(inbox.LineReason(err)) }

func notFreshNote(f inbox.Freshness) string {
	switch f.Reason {
	case inboxv1.ReasonHeartbeatMissing:
		return "no doorman heartbeat"
	case inboxv1.ReasonHeartbeatStale:
		if f.Age > 0 {
			return fmt.Sprintf("the doorman's heartbeat is stale (last seen %.1fs ago)", f.Age.Seconds())
		}
		return "the doorman's heartbeat is stale"
	case inboxv1.ReasonDoormanState:
		return fmt.Sprintf("the doorman is %s, not following", f.Detail)
	case inboxv1.ReasonDoormanGone:
		return "the doorman's process is gone"
	case inboxv1.ReasonOtherSession:
		return fmt.Sprintf("the heartbeat is another session's (%s)", f.Detail)
	case inboxv1.ReasonHeartbeatUnreadable:
		return "the doorman's heartbeat is unreadable"
	}
	return "no fresh doorman heartbeat"
}

// fileSize is the size of the regular file at path (one lstat), 0 when
// it is absent or not a regular file. The ack wait reads from there; what
// it reads is opened through fsx's checks.
func fileSize(path string) int64 {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return fi.Size()
}

// ackTaken reports whether a is an ack a send may take for its line to
// session sid: of a class a doorman writes, and for that session (a v1
// ack without session_id is taken).
func ackTaken(a inboxv1.Ack, sid string) bool {
	switch a.Class {
	case inboxv1.AckDeliveredSteer, inboxv1.AckDeliveredStart, inboxv1.AckRefused:
	default:
		return false
	}
	return a.SessionID == "" || strings.EqualFold(a.SessionID, sid)
}

// awaitAck waits up to s.Wait for the ack of the line (sha, offset) in the
// ack file, reading from byte from on. It is woken by the ack file's own
// events (fsx.NewFileWaker: a neighbour in the inbox directory, another
// session's heartbeat or inbox, wakes nothing) and, where no watch could
// be set up, by a coarse timer. It returns nil
// when no ack came; the error is ctx's when ctx ended first.
//
// Only an ack that is one is taken (ackTaken): a row of the line with a
// class no doorman writes, or for another session than sid, is passed
// over, so a forged or broken row is never a delivered-* verdict.
func (s *Sender) awaitAck(ctx context.Context, files inboxv1.Files, from int64, sha string, offset int64, sid string) (*inboxv1.Ack, error) {
	pos := from
	scan := func() *inboxv1.Ack {
		// A bare descriptor read at offsets, up to the size fstat saw:
		// open, fstat, pread, close (the checked open's checks, without
		// the poller's calls or a read to see the end). An ack appended
		// after the fstat wakes the wait again; a line cut by the size
		// is read whole at the next look.
		f, fi, err := fsx.OpenReadAt(files.Ack)
		if err != nil {
			return nil
		}
		defer f.Close()
		if fi.Size() < pos {
			pos = 0 // truncated or replaced: read it again from the start
		}
		var found *inboxv1.Ack
		inbox.ScanAcks(io.NewSectionReader(f, pos, fi.Size()-pos), pos, func(a inboxv1.Ack, end int64) bool {
			pos = end
			if a.Matches(sha, offset) && ackTaken(a, sid) {
				found = &a
				return false
			}
			return true
		})
		return found
	}

	// A receiver that acks at once has acked by the first look: no file
	// watch is set up for it.
	if a := scan(); a != nil || s.Wait == 0 {
		return a, nil
	}
	// Armed before the second look, so no ack between them is missed.
	// Dropped, not closed, when the wait ends: the kernel retires the
	// watch while the verdict and its receipt are written (a close waits
	// for that, milliseconds).
	wake := fsx.NewFileWaker(ackPoll/10, files.Ack)
	defer wake.Drop()
	if a := scan(); a != nil {
		return a, nil
	}
	deadline := time.NewTimer(s.Wait)
	defer deadline.Stop()
	for {
		select {
		case <-ctx.Done():
			return scan(), ctx.Err()
		case <-deadline.C:
			return scan(), nil
		case <-wake.C:
		}
		if a := scan(); a != nil {
			return a, nil
		}
	}
}

// Row returns the verdict as a receipt row with every key of the send row
// (COMPATIBILITY.md, "Added keys (extensions)"); what the verdict does not
// know is null.
func (v Verdict) Row() receipt.SendRow {
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	r := receipt.SendRow{
		Kind:          receipt.KindSend,
		Class:         string(v.Class),
		Delivered:     v.Class.Delivered(),
		Target:        v.Target,
		SessionID:     str(v.SessionID),
		Name:          str(v.Name),
		Status:        str(v.Status),
		From:          str(v.From),
		Line:          str(v.Line),
		Inbox:         str(v.Inbox),
		PeerStatus:    str(v.PeerStatus),
		MsgID:         str(v.MsgID),
		Priority:      str(v.Priority),
		WaitS:         jsonrow.Seconds(v.Wait),
		MinIntervalS:  jsonrow.Seconds(v.MinInterval),
		Reason:        str(string(v.Reason)),
		Note:          str(v.Note),
		Hint:          str(v.Hint),
		ClientVersion: str(v.ClientVersion),
		Station:       str(v.Station),
	}
	if !v.At.IsZero() {
		r.TS, r.TSMS = jsonrow.Stamp(v.At)
	}
	if v.SessionID != "" {
		r.Running = jsonrow.Ptr(v.Running)
	}
	if v.PID > 0 {
		r.PID = jsonrow.Ptr(v.PID)
	}
	if v.SHA256 != "" {
		r.SHA256, r.Bytes = str(v.SHA256), jsonrow.Ptr(v.Bytes)
	}
	if v.Written {
		r.LineOffset = jsonrow.Ptr(v.LineOffset)
	}
	if d := v.Doorman; d != nil {
		r.Doorman = &receipt.Doorman{Fresh: d.Fresh, State: str(d.State), NotFreshBecause: str(string(d.NotFreshBecause)), LastError: str(d.LastError), Pending: str(string(d.Pending))}
		if d.PID > 0 {
			r.Doorman.PID = jsonrow.Ptr(d.PID)
		}
		if d.Age != 0 {
			r.Doorman.Age = jsonrow.Seconds(d.Age)
		}
	}
	if v.ack != nil {
		if b, err := inbox.EncodeAck(*v.ack); err == nil {
			r.Ack = b
		}
	}
	if v.Doorman != nil && v.Doorman.Fresh {
		r.WaitedS = jsonrow.Seconds(v.Waited)
	}
	if v.Seen != nil {
		r.Seen, r.SeenS = jsonrow.Ptr(*v.Seen), jsonrow.Seconds(v.SeenAfter)
	}
	if v.waited {
		r.Transcript, r.TranscriptOffset = str(v.Transcript), jsonrow.Ptr(v.TranscriptOffset)
	}
	r.Confirm, r.QueuedAt = str(v.Confirm), str(v.QueuedAt)
	if v.ReplyWait > 0 && v.Class.Delivered() {
		r.Reply, r.ReplyS = v.Reply, jsonrow.Seconds(v.ReplyAfter)
	}
	r.WaitEnd, r.Interrupted = str(string(v.WaitEnd)), str(v.InterruptedBy)
	r.ReceiptWriteError = str(v.ReceiptWriteError)
	return r
}
