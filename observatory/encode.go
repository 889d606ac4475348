package observatory

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/transcript"
)

// AppendJSON appends the document's JSON encoding to b and returns the
// extended buffer: byte for byte what json.Marshal(d) gives (its keys, their
// order, its escaping), written field by field, without reflection, a
// Marshaler call per null-able string and rider, or the validation and
// copy of each Marshaler's output that encoding/json makes. A value it
// cannot write as json.Marshal would (a float that is not finite, a time
// that RFC 3339 cannot hold) makes it return json.Marshal's own bytes or
// error.
func (d *Document) AppendJSON(b []byte) ([]byte, error) {
	e := encoder{b: slices.Grow(b, sizeHint(d))}
	e.document(d)
	if e.fallback {
		out, err := json.Marshal(d)
		if err != nil {
			return b, err
		}
		return append(b, out...), nil
	}
	return e.b, nil
}

// sizeHint is about the bytes of d's encoding, so that the buffer grows
// once: a session's fields and inbox take about 1 KiB, a rider 500 bytes.
func sizeHint(d *Document) int {
	n := 1024 + 256*len(d.Warnings)
	for i := range d.Sessions {
		n += 1024 + 512*len(d.Sessions[i].Riders)
	}
	return n + 512*(len(d.OfflineInboxes)+len(d.Starts))
}

// encoder is one AppendJSON: the buffer, and whether a value was met that
// only json.Marshal writes exactly.
type encoder struct {
	b        []byte
	fallback bool
}

func (e *encoder) document(d *Document) {
	e.b = append(e.b, `{"schema":`...)
	e.str(d.Schema)
	e.b = append(e.b, `,"generated_at":`...)
	e.str(d.GeneratedAt)
	e.b = append(e.b, `,"station":`...)
	e.str(d.Station)
	e.b = append(e.b, `,"sessions":`...)
	if d.Sessions == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range d.Sessions {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.session(&d.Sessions[i])
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, `,"generator":`...)
	e.str(d.Generator)
	e.b = append(e.b, `,"riding_window_s":`...)
	e.float(d.RidingWindowS)
	e.b = append(e.b, `,"include_finished":`...)
	e.bool(d.IncludeFinished)
	e.b = append(e.b, `,"offline_inboxes":`...)
	if d.OfflineInboxes == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range d.OfflineInboxes {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.offlineInbox(&d.OfflineInboxes[i])
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, `,"starts":`...)
	if d.Starts == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range d.Starts {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.start(&d.Starts[i])
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, `,"warnings":`...)
	e.strs(d.Warnings)
	if len(d.Stations) > 0 { // omitempty
		e.b = append(e.b, `,"stations":[`...)
		for i, s := range d.Stations {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, `{"station":`...)
			e.str(s.Station)
			if s.Name != "" {
				e.b = append(e.b, `,"name":`...)
				e.str(s.Name)
			}
			if s.Error != "" {
				e.b = append(e.b, `,"error":`...)
				e.str(s.Error)
			}
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, '}')
}

func (e *encoder) session(s *Session) {
	e.b = append(e.b, `{"session":`...)
	e.str(s.Session)
	e.b = append(e.b, `,"name":`...)
	e.str(s.Name)
	e.b = append(e.b, `,"pid":`...)
	e.b = strconv.AppendInt(e.b, int64(s.PID), 10)
	e.b = append(e.b, `,"status":`...)
	e.str(s.Status)
	e.b = append(e.b, `,"cwd":`...)
	e.str(s.CWD)
	e.b = append(e.b, `,"version":`...)
	e.str(s.Version)
	e.b = append(e.b, `,"started_ms":`...)
	e.b = strconv.AppendInt(e.b, s.StartedMS, 10)
	e.b = append(e.b, `,"riders":`...)
	if s.Riders == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range s.Riders {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.rider(&s.Riders[i])
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, `,"inbox":`...)
	e.inbox(&s.Inbox)
	e.b = append(e.b, `,"host_session":`...)
	e.nullStr(s.HostSession)
	e.b = append(e.b, `,"parent_host":`...)
	e.nullStr(s.ParentHost)
	e.b = append(e.b, `,"parent_session":`...)
	e.nullStr(s.ParentSession)
	e.b = append(e.b, `,"children":`...)
	e.strs(s.Children)
	e.b = append(e.b, `,"since":`...)
	e.nullStr(s.Since)
	e.b = append(e.b, `,"kind":`...)
	e.str(s.Kind)
	e.b = append(e.b, `,"entrypoint":`...)
	e.str(s.Entrypoint)
	e.b = append(e.b, `,"riders_riding":`...)
	e.b = strconv.AppendInt(e.b, int64(s.RidersRiding), 10)
	e.b = append(e.b, `,"riders_total":`...)
	e.b = strconv.AppendInt(e.b, int64(s.RidersTotal), 10)
	e.b = append(e.b, `,"status_updated_ms":`...)
	e.b = strconv.AppendInt(e.b, s.StatusUpdatedMS, 10)
	if s.Station != "" { // omitempty
		e.b = append(e.b, `,"station":`...)
		e.str(s.Station)
	}
	e.b = append(e.b, '}')
}

// rider is transcript.Rider's MarshalJSON: its fields in order, started
// last, null when unknown.
func (e *encoder) rider(r *transcript.Rider) {
	e.b = append(e.b, `{"agent":`...)
	e.str(r.Agent)
	e.b = append(e.b, `,"last_activity_s":`...)
	e.b = strconv.AppendInt(e.b, r.LastActivityS, 10)
	e.b = append(e.b, `,"rows":`...)
	e.b = strconv.AppendInt(e.b, r.Rows, 10)
	e.b = append(e.b, `,"state":`...)
	e.str(string(r.State))
	e.b = append(e.b, `,"last_step":`...)
	e.str(r.LastStep)
	e.b = append(e.b, `,"last_text":`...)
	e.str(r.LastText)
	e.b = append(e.b, `,"description":`...)
	e.str(r.Description)
	e.b = append(e.b, `,"agent_type":`...)
	e.str(r.AgentType)
	e.b = append(e.b, `,"model":`...)
	e.str(r.Model)
	e.b = append(e.b, `,"state_reason":`...)
	e.str(r.StateReason)
	e.b = append(e.b, `,"path":`...)
	e.str(r.Path)
	e.b = append(e.b, `,"bytes":`...)
	e.b = strconv.AppendInt(e.b, r.Bytes, 10)
	e.b = append(e.b, `,"started":`...)
	if r.Started.IsZero() {
		e.b = append(e.b, "null"...)
	} else {
		e.time(r.Started)
	}
	e.b = append(e.b, '}')
}

func (e *encoder) inbox(in *inboxv1.Inbox) {
	e.b = append(e.b, `{"path":`...)
	e.str(in.Path)
	e.b = append(e.b, `,"exists":`...)
	e.bool(in.Exists)
	e.b = append(e.b, `,"lines":`...)
	e.b = strconv.AppendInt(e.b, in.Lines, 10)
	e.b = append(e.b, `,"acks":`...)
	e.b = strconv.AppendInt(e.b, in.Acks, 10)
	e.b = append(e.b, `,"pending":`...)
	e.b = strconv.AppendInt(e.b, in.Pending, 10)
	e.b = append(e.b, `,"doorman":`...)
	e.doorman(in.Doorman)
	e.b = append(e.b, `,"last_line":`...)
	e.nullStr(in.LastLine)
	e.b = append(e.b, `,"offset":`...)
	intPtr(e, in.Offset)
	e.b = append(e.b, `,"pending_bytes":`...)
	intPtr(e, in.PendingBytes)
	e.b = append(e.b, `,"pending_source":`...)
	e.str(string(in.PendingSource))
	e.b = append(e.b, '}')
}

func (e *encoder) doorman(d *inboxv1.Doorman) {
	if d == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, `{"pid":`...)
	e.b = strconv.AppendInt(e.b, int64(d.PID), 10)
	e.b = append(e.b, `,"last_seen_s":`...)
	if d.LastSeenS == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.float(*d.LastSeenS)
	}
	e.b = append(e.b, `,"fresh":`...)
	e.bool(d.Fresh)
	e.b = append(e.b, `,"delivered":`...)
	e.b = strconv.AppendInt(e.b, int64(d.Delivered), 10)
	e.b = append(e.b, `,"state":`...)
	e.nullStr(d.State)
	e.b = append(e.b, `,"pid_alive":`...)
	e.bool(d.PIDAlive)
	e.b = append(e.b, `,"since":`...)
	e.nullStr(d.Since)
	e.b = append(e.b, `,"last_seen":`...)
	e.nullStr(d.LastSeen)
	e.b = append(e.b, `,"mode":`...)
	e.nullStr(d.Mode)
	e.b = append(e.b, `,"version":`...)
	e.nullStr(d.Version)
	e.b = append(e.b, `,"not_fresh_because":`...)
	e.nullStr(d.NotFreshBecause)
	e.b = append(e.b, '}')
}

func (e *encoder) offlineInbox(o *OfflineInbox) {
	e.b = append(e.b, `{"session":`...)
	e.str(o.Session)
	e.b = append(e.b, `,"pending":`...)
	e.b = strconv.AppendInt(e.b, o.Pending, 10)
	e.b = append(e.b, `,"lines":`...)
	e.b = strconv.AppendInt(e.b, o.Lines, 10)
	e.b = append(e.b, `,"last_line":`...)
	e.nullStr(o.LastLine)
	e.b = append(e.b, `,"doorman":`...)
	e.doorman(o.Doorman)
	e.b = append(e.b, `,"path":`...)
	e.str(o.Path)
	e.b = append(e.b, '}')
}

func (e *encoder) start(s *Start) {
	e.b = append(e.b, `{"session":`...)
	e.str(s.Session)
	e.b = append(e.b, `,"state":`...)
	e.str(s.State)
	e.b = append(e.b, `,"result_file":`...)
	e.str(s.ResultFile)
	e.b = append(e.b, `,"unit":`...)
	e.nullStr(s.Unit)
	e.b = append(e.b, `,"pid":`...)
	intPtr(e, s.PID)
	e.b = append(e.b, `,"supervisor_pid":`...)
	intPtr(e, s.SupervisorPID)
	e.b = append(e.b, `,"started_at":`...)
	e.nullStr(s.StartedAt)
	e.b = append(e.b, `,"ended_at":`...)
	e.nullStr(s.EndedAt)
	e.b = append(e.b, `,"reason":`...)
	e.nullStr(s.Reason)
	e.b = append(e.b, `,"finalized":`...)
	e.bool(s.Finalized)
	e.b = append(e.b, '}')
}

func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, "true"...)
	} else {
		e.b = append(e.b, "false"...)
	}
}

// intPtr writes *p, or null for nil.
func intPtr[T int | int64](e *encoder, p *T) {
	if p == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = strconv.AppendInt(e.b, int64(*p), 10)
}

// strs writes a []string: null when nil.
func (e *encoder) strs(v []string) {
	if v == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i, s := range v {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(s)
	}
	e.b = append(e.b, ']')
}

// nullStr is inboxv1.NullString's MarshalJSON: null for "".
func (e *encoder) nullStr(s inboxv1.NullString) {
	if s == "" {
		e.b = append(e.b, "null"...)
		return
	}
	e.str(string(s))
}

// float is encoding/json's float64: the shortest decimal that reads back
// as f, in the exponent form below 1e-6 and from 1e21 on (e-7, not
// e-07). Not finite, it is json.Marshal's error.
func (e *encoder) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.fallback = true
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if format == 'e' {
		if n := len(e.b); n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

// time is time.Time's MarshalJSON: RFC 3339 with nanoseconds, quoted,
// appended in place for a UTC time of a four-digit year (the times a
// transcript holds); any other time by its MarshalJSON, and one that
// cannot be written is left to json.Marshal, which knows its error.
func (e *encoder) time(t time.Time) {
	if y := t.Year(); t.Location() == time.UTC && y >= 0 && y <= 9999 {
		e.b = append(e.b, '"')
		e.b = t.AppendFormat(e.b, time.RFC3339Nano)
		e.b = append(e.b, '"')
		return
	}
	out, err := t.MarshalJSON()
	if err != nil {
		e.fallback = true
		return
	}
	e.b = append(e.b, out...)
}

// str is encoding/json's string, HTML-escaped as json.Marshal escapes:
// the quote, the backslash and the control characters escaped (\b \f \n \r
// \t by name, the others as \u00XX), <, > and & as \u003c \u003e
// \u0026, invalid UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 \u2029.
func (e *encoder) str(s string) {
	const hex = "0123456789abcdef"
	b := append(e.b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	e.b = append(b, '"')
}
