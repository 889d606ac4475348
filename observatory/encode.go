package observatory

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/jsonw"
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
	e := encoder{jsonw.Encoder{B: slices.Grow(b, sizeHint(d))}}
	e.document(d)
	if e.Fallback {
		out, err := json.Marshal(d)
		if err != nil {
			return b, err
		}
		return append(b, out...), nil
	}
	return e.B, nil
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
type encoder struct{ jsonw.Encoder }

func (e *encoder) document(d *Document) {
	e.B = append(e.B, `{"schema":`...)
	e.Str(d.Schema)
	e.B = append(e.B, `,"generated_at":`...)
	e.Str(d.GeneratedAt)
	e.B = append(e.B, `,"station":`...)
	e.Str(d.Station)
	e.B = append(e.B, `,"sessions":`...)
	if d.Sessions == nil {
		e.B = append(e.B, "null"...)
	} else {
		e.B = append(e.B, '[')
		for i := range d.Sessions {
			if i > 0 {
				e.B = append(e.B, ',')
			}
			e.session(&d.Sessions[i])
		}
		e.B = append(e.B, ']')
	}
	e.B = append(e.B, `,"generator":`...)
	e.Str(d.Generator)
	e.B = append(e.B, `,"riding_window_s":`...)
	e.Float(d.RidingWindowS)
	e.B = append(e.B, `,"include_finished":`...)
	e.Bool(d.IncludeFinished)
	e.B = append(e.B, `,"offline_inboxes":`...)
	if d.OfflineInboxes == nil {
		e.B = append(e.B, "null"...)
	} else {
		e.B = append(e.B, '[')
		for i := range d.OfflineInboxes {
			if i > 0 {
				e.B = append(e.B, ',')
			}
			e.offlineInbox(&d.OfflineInboxes[i])
		}
		e.B = append(e.B, ']')
	}
	e.B = append(e.B, `,"starts":`...)
	if d.Starts == nil {
		e.B = append(e.B, "null"...)
	} else {
		e.B = append(e.B, '[')
		for i := range d.Starts {
			if i > 0 {
				e.B = append(e.B, ',')
			}
			e.start(&d.Starts[i])
		}
		e.B = append(e.B, ']')
	}
	e.B = append(e.B, `,"warnings":`...)
	e.Strs(d.Warnings)
	if len(d.Stations) > 0 { // omitempty
		e.B = append(e.B, `,"stations":[`...)
		for i, s := range d.Stations {
			if i > 0 {
				e.B = append(e.B, ',')
			}
			e.B = append(e.B, `{"station":`...)
			e.Str(s.Station)
			if s.Name != "" {
				e.B = append(e.B, `,"name":`...)
				e.Str(s.Name)
			}
			if s.Error != "" {
				e.B = append(e.B, `,"error":`...)
				e.Str(s.Error)
			}
			e.B = append(e.B, '}')
		}
		e.B = append(e.B, ']')
	}
	e.B = append(e.B, '}')
}

func (e *encoder) session(s *Session) {
	e.B = append(e.B, `{"session":`...)
	e.Str(s.Session)
	e.B = append(e.B, `,"name":`...)
	e.Str(s.Name)
	e.B = append(e.B, `,"pid":`...)
	e.B = strconv.AppendInt(e.B, int64(s.PID), 10)
	e.B = append(e.B, `,"status":`...)
	e.Str(s.Status)
	e.B = append(e.B, `,"cwd":`...)
	e.Str(s.CWD)
	e.B = append(e.B, `,"version":`...)
	e.Str(s.Version)
	e.B = append(e.B, `,"started_ms":`...)
	e.B = strconv.AppendInt(e.B, s.StartedMS, 10)
	e.B = append(e.B, `,"riders":`...)
	if s.Riders == nil {
		e.B = append(e.B, "null"...)
	} else {
		e.B = append(e.B, '[')
		for i := range s.Riders {
			if i > 0 {
				e.B = append(e.B, ',')
			}
			e.rider(&s.Riders[i])
		}
		e.B = append(e.B, ']')
	}
	e.B = append(e.B, `,"inbox":`...)
	e.inbox(&s.Inbox)
	e.B = append(e.B, `,"host_session":`...)
	e.nullStr(s.HostSession)
	e.B = append(e.B, `,"parent_host":`...)
	e.nullStr(s.ParentHost)
	e.B = append(e.B, `,"parent_session":`...)
	e.nullStr(s.ParentSession)
	e.B = append(e.B, `,"children":`...)
	e.Strs(s.Children)
	e.B = append(e.B, `,"since":`...)
	e.nullStr(s.Since)
	e.B = append(e.B, `,"kind":`...)
	e.Str(s.Kind)
	e.B = append(e.B, `,"entrypoint":`...)
	e.Str(s.Entrypoint)
	e.B = append(e.B, `,"riders_riding":`...)
	e.B = strconv.AppendInt(e.B, int64(s.RidersRiding), 10)
	e.B = append(e.B, `,"riders_total":`...)
	e.B = strconv.AppendInt(e.B, int64(s.RidersTotal), 10)
	e.B = append(e.B, `,"status_updated_ms":`...)
	e.B = strconv.AppendInt(e.B, s.StatusUpdatedMS, 10)
	if s.Station != "" { // omitempty
		e.B = append(e.B, `,"station":`...)
		e.Str(s.Station)
	}
	e.B = append(e.B, '}')
}

// rider is transcript.Rider's MarshalJSON: its fields in order, started
// last, null when unknown.
func (e *encoder) rider(r *transcript.Rider) {
	e.B = append(e.B, `{"agent":`...)
	e.Str(r.Agent)
	e.B = append(e.B, `,"last_activity_s":`...)
	e.B = strconv.AppendInt(e.B, r.LastActivityS, 10)
	e.B = append(e.B, `,"rows":`...)
	e.B = strconv.AppendInt(e.B, r.Rows, 10)
	e.B = append(e.B, `,"state":`...)
	e.Str(string(r.State))
	e.B = append(e.B, `,"last_step":`...)
	e.Str(r.LastStep)
	e.B = append(e.B, `,"last_text":`...)
	e.Str(r.LastText)
	e.B = append(e.B, `,"description":`...)
	e.Str(r.Description)
	e.B = append(e.B, `,"agent_type":`...)
	e.Str(r.AgentType)
	e.B = append(e.B, `,"model":`...)
	e.Str(r.Model)
	e.B = append(e.B, `,"state_reason":`...)
	e.Str(r.StateReason)
	e.B = append(e.B, `,"path":`...)
	e.Str(r.Path)
	e.B = append(e.B, `,"bytes":`...)
	e.B = strconv.AppendInt(e.B, r.Bytes, 10)
	e.B = append(e.B, `,"started":`...)
	if r.Started.IsZero() {
		e.B = append(e.B, "null"...)
	} else {
		e.Time(r.Started)
	}
	e.B = append(e.B, '}')
}

func (e *encoder) inbox(in *inboxv1.Inbox) {
	e.B = append(e.B, `{"path":`...)
	e.Str(in.Path)
	e.B = append(e.B, `,"exists":`...)
	e.Bool(in.Exists)
	e.B = append(e.B, `,"lines":`...)
	e.B = strconv.AppendInt(e.B, in.Lines, 10)
	e.B = append(e.B, `,"acks":`...)
	e.B = strconv.AppendInt(e.B, in.Acks, 10)
	e.B = append(e.B, `,"pending":`...)
	e.B = strconv.AppendInt(e.B, in.Pending, 10)
	e.B = append(e.B, `,"doorman":`...)
	e.doorman(in.Doorman)
	e.B = append(e.B, `,"last_line":`...)
	e.nullStr(in.LastLine)
	e.B = append(e.B, `,"offset":`...)
	jsonw.IntPtr(&e.Encoder, in.Offset)
	e.B = append(e.B, `,"pending_bytes":`...)
	jsonw.IntPtr(&e.Encoder, in.PendingBytes)
	e.B = append(e.B, `,"pending_source":`...)
	e.Str(string(in.PendingSource))
	e.B = append(e.B, '}')
}

func (e *encoder) doorman(d *inboxv1.Doorman) {
	if d == nil {
		e.B = append(e.B, "null"...)
		return
	}
	e.B = append(e.B, `{"pid":`...)
	e.B = strconv.AppendInt(e.B, int64(d.PID), 10)
	e.B = append(e.B, `,"last_seen_s":`...)
	if d.LastSeenS == nil {
		e.B = append(e.B, "null"...)
	} else {
		e.Float(*d.LastSeenS)
	}
	e.B = append(e.B, `,"fresh":`...)
	e.Bool(d.Fresh)
	e.B = append(e.B, `,"delivered":`...)
	e.B = strconv.AppendInt(e.B, int64(d.Delivered), 10)
	e.B = append(e.B, `,"state":`...)
	e.nullStr(d.State)
	e.B = append(e.B, `,"pid_alive":`...)
	e.Bool(d.PIDAlive)
	e.B = append(e.B, `,"since":`...)
	e.nullStr(d.Since)
	e.B = append(e.B, `,"last_seen":`...)
	e.nullStr(d.LastSeen)
	e.B = append(e.B, `,"mode":`...)
	e.nullStr(d.Mode)
	e.B = append(e.B, `,"version":`...)
	e.nullStr(d.Version)
	e.B = append(e.B, `,"not_fresh_because":`...)
	e.nullStr(d.NotFreshBecause)
	e.B = append(e.B, '}')
}

func (e *encoder) offlineInbox(o *OfflineInbox) {
	e.B = append(e.B, `{"session":`...)
	e.Str(o.Session)
	e.B = append(e.B, `,"pending":`...)
	e.B = strconv.AppendInt(e.B, o.Pending, 10)
	e.B = append(e.B, `,"lines":`...)
	e.B = strconv.AppendInt(e.B, o.Lines, 10)
	e.B = append(e.B, `,"last_line":`...)
	e.nullStr(o.LastLine)
	e.B = append(e.B, `,"doorman":`...)
	e.doorman(o.Doorman)
	e.B = append(e.B, `,"path":`...)
	e.Str(o.Path)
	e.B = append(e.B, '}')
}

func (e *encoder) start(s *Start) {
	e.B = append(e.B, `{"session":`...)
	e.Str(s.Session)
	e.B = append(e.B, `,"state":`...)
	e.Str(s.State)
	e.B = append(e.B, `,"result_file":`...)
	e.Str(s.ResultFile)
	e.B = append(e.B, `,"unit":`...)
	e.nullStr(s.Unit)
	e.B = append(e.B, `,"pid":`...)
	jsonw.IntPtr(&e.Encoder, s.PID)
	e.B = append(e.B, `,"supervisor_pid":`...)
	jsonw.IntPtr(&e.Encoder, s.SupervisorPID)
	e.B = append(e.B, `,"started_at":`...)
	e.nullStr(s.StartedAt)
	e.B = append(e.B, `,"ended_at":`...)
	e.nullStr(s.EndedAt)
	e.B = append(e.B, `,"reason":`...)
	e.nullStr(s.Reason)
	e.B = append(e.B, `,"finalized":`...)
	e.Bool(s.Finalized)
	e.B = append(e.B, '}')
}

// nullStr is inboxv1.NullString's MarshalJSON: null for "".
func (e *encoder) nullStr(s inboxv1.NullString) {
	if s == "" {
		e.B = append(e.B, "null"...)
		return
	}
	e.Str(string(s))
}
