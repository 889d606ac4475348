package receipt

import (
	"encoding/json"

	"github.com/oo-family/oo-claude/internal/jsonw"
)

// sendRowJSON is SendRow without its methods: what json.Marshal makes of
// its fields by reflection, the bytes MarshalJSON writes without it.
type sendRowJSON SendRow

// MarshalJSON writes the row as json.Marshal writes its fields (the keys
// in the struct's order, the same escaping and number forms), field by
// field: a send writes its row once as its receipt and once on stdout,
// and encoding/json's first encoding of the type builds its field table
// (tens of microseconds, measured, in every send process). A value only
// encoding/json writes exactly (a float that is not finite, an ack that
// is not valid JSON, a reply time RFC 3339 cannot hold) gives
// json.Marshal's own bytes or error. TestSendRowMarshalJSON holds the two
// to the same bytes.
func (r SendRow) MarshalJSON() ([]byte, error) {
	e := jsonw.Encoder{B: make([]byte, 0, 1536)}
	appendSendRow(&e, &r)
	if e.Fallback {
		return json.Marshal(sendRowJSON(r))
	}
	return e.B, nil
}

func appendSendRow(e *jsonw.Encoder, r *SendRow) {
	e.B = append(e.B, `{"ts":`...)
	e.Str(r.TS)
	e.B = append(e.B, `,"ts_ms":`...)
	e.Int(r.TSMS)
	e.B = append(e.B, `,"kind":`...)
	e.Str(string(r.Kind))
	e.B = append(e.B, `,"class":`...)
	e.Str(r.Class)
	e.B = append(e.B, `,"delivered":`...)
	e.Bool(r.Delivered)
	e.B = append(e.B, `,"target":`...)
	e.Str(r.Target)
	e.B = append(e.B, `,"session_id":`...)
	e.StrPtr(r.SessionID)
	e.B = append(e.B, `,"name":`...)
	e.StrPtr(r.Name)
	e.B = append(e.B, `,"pid":`...)
	jsonw.IntPtr(e, r.PID)
	e.B = append(e.B, `,"running":`...)
	e.BoolPtr(r.Running)
	e.B = append(e.B, `,"status":`...)
	e.StrPtr(r.Status)
	e.B = append(e.B, `,"from":`...)
	e.StrPtr(r.From)
	e.B = append(e.B, `,"line":`...)
	e.StrPtr(r.Line)
	e.B = append(e.B, `,"sha256":`...)
	e.StrPtr(r.SHA256)
	e.B = append(e.B, `,"bytes":`...)
	jsonw.IntPtr(e, r.Bytes)
	e.B = append(e.B, `,"inbox":`...)
	e.StrPtr(r.Inbox)
	e.B = append(e.B, `,"line_offset":`...)
	jsonw.IntPtr(e, r.LineOffset)
	e.B = append(e.B, `,"doorman":`...)
	appendDoorman(e, r.Doorman)
	e.B = append(e.B, `,"ack":`...)
	e.Raw(r.Ack)
	e.B = append(e.B, `,"peer_status":`...)
	e.StrPtr(r.PeerStatus)
	e.B = append(e.B, `,"msg_id":`...)
	e.StrPtr(r.MsgID)
	e.B = append(e.B, `,"waited_s":`...)
	e.FloatPtr(r.WaitedS)
	e.B = append(e.B, `,"wait_s":`...)
	e.FloatPtr(r.WaitS)
	e.B = append(e.B, `,"min_interval_s":`...)
	e.FloatPtr(r.MinIntervalS)
	e.B = append(e.B, `,"reason":`...)
	e.StrPtr(r.Reason)
	e.B = append(e.B, `,"note":`...)
	e.StrPtr(r.Note)
	e.B = append(e.B, `,"hint":`...)
	e.StrPtr(r.Hint)
	e.B = append(e.B, `,"client_version":`...)
	e.StrPtr(r.ClientVersion)
	e.B = append(e.B, `,"seen":`...)
	e.BoolPtr(r.Seen)
	e.B = append(e.B, `,"seen_s":`...)
	e.FloatPtr(r.SeenS)
	e.B = append(e.B, `,"transcript":`...)
	e.StrPtr(r.Transcript)
	e.B = append(e.B, `,"transcript_offset":`...)
	jsonw.IntPtr(e, r.TranscriptOffset)
	e.B = append(e.B, `,"reply":`...)
	appendReply(e, r.Reply)
	e.B = append(e.B, `,"reply_s":`...)
	e.FloatPtr(r.ReplyS)
	e.B = append(e.B, `,"priority":`...)
	e.StrPtr(r.Priority)
	e.B = append(e.B, `,"confirm":`...)
	e.StrPtr(r.Confirm)
	e.B = append(e.B, `,"queued_at":`...)
	e.StrPtr(r.QueuedAt)
	e.B = append(e.B, `,"wait_end":`...)
	e.StrPtr(r.WaitEnd)
	e.B = append(e.B, `,"interrupted":`...)
	e.StrPtr(r.Interrupted)
	e.B = append(e.B, `,"station":`...)
	e.StrPtr(r.Station)
	if r.ReceiptWriteError != nil { // omitempty
		e.B = append(e.B, `,"receipt_write_error":`...)
		e.StrPtr(r.ReceiptWriteError)
	}
	e.B = append(e.B, '}')
}

func appendDoorman(e *jsonw.Encoder, d *Doorman) {
	if d == nil {
		e.Null()
		return
	}
	e.B = append(e.B, `{"fresh":`...)
	e.Bool(d.Fresh)
	e.B = append(e.B, `,"pid":`...)
	jsonw.IntPtr(e, d.PID)
	e.B = append(e.B, `,"age":`...)
	e.FloatPtr(d.Age)
	e.B = append(e.B, `,"state":`...)
	e.StrPtr(d.State)
	e.B = append(e.B, `,"not_fresh_because":`...)
	e.StrPtr(d.NotFreshBecause)
	e.B = append(e.B, `,"last_error":`...)
	e.StrPtr(d.LastError)
	e.B = append(e.B, `,"pending":`...)
	e.StrPtr(d.Pending)
	e.B = append(e.B, '}')
}

func appendReply(e *jsonw.Encoder, r *Reply) {
	if r == nil {
		e.Null()
		return
	}
	e.B = append(e.B, `{"text":`...)
	e.Str(r.Text)
	e.B = append(e.B, `,"tools":`...)
	e.Strs(r.Tools)
	e.B = append(e.B, `,"stop_reason":`...)
	e.Str(r.StopReason)
	e.B = append(e.B, `,"turn_ended":`...)
	e.Bool(r.TurnEnded)
	if !r.At.IsZero() { // omitzero
		e.B = append(e.B, `,"at":`...)
		e.Time(r.At)
	}
	e.B = append(e.B, '}')
}
