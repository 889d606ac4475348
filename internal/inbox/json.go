package inbox

import (
	"encoding/json"
	"strconv"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/jsonscan"
	"github.com/oo-family/oo-claude/internal/jsonw"
)

// The heartbeat and the ack are read in one pass with jsonscan's exact
// readers, not encoding/json: every send reads both, and a process's
// first decode of a type through encoding/json builds that type's field
// table (tens of microseconds each, measured, before the send's door
// write). A text the scanner is not sure to read as encoding/json does
// (FieldIndex's keys, a value of another type, invalid JSON) goes to
// encoding/json, which gives the value or the error; FuzzDecodeHeartbeat
// and FuzzDecodeAck hold the two to the same result.

var heartbeatKeys = [...]string{
	"pid", "session_id", "since", "last_seen", "delivered", "offset", "state", "inode", "owner_pid",
	"peer_pid", "socket", "mode", "version", "pending_bytes", "last_error", "stopped_at", "pacing",
	"confirmed", "unconfirmed",
}

// decodeHeartbeat decodes a heartbeat file's content as json.Unmarshal
// into an inboxv1.Heartbeat does.
func decodeHeartbeat(b []byte) (inboxv1.Heartbeat, error) {
	return jsonscan.Unmarshal(b, scanHeartbeat)
}

// scanHeartbeat is decodeHeartbeat's one pass; ok is false when the
// scanner bailed.
func scanHeartbeat(b []byte) (h inboxv1.Heartbeat, ok bool) {
	s := jsonscan.New(b)
	var seen [len(heartbeatKeys)]bool
	if s.Whole(func(key []byte) bool {
		switch jsonscan.FieldIndex(key, seen[:], heartbeatKeys[:]...) {
		case 0:
			h.PID = int(s.ExactInt(strconv.IntSize))
		case 1:
			h.SessionID = s.ExactString()
		case 2:
			h.Since = s.ExactString()
		case 3:
			h.LastSeen = s.ExactString()
		case 4:
			h.Delivered = int(s.ExactInt(strconv.IntSize))
		case 5:
			h.Offset = s.ExactInt(64)
		case 6:
			h.State = inboxv1.State(s.ExactString())
		case 7:
			h.Inode = s.ExactUint(64)
		case 8:
			h.OwnerPID = int(s.ExactInt(strconv.IntSize))
		case 9:
			h.PeerPID = int(s.ExactInt(strconv.IntSize))
		case 10:
			h.Socket = s.ExactString()
		case 11:
			h.Mode = s.ExactString()
		case 12:
			h.Version = s.ExactString()
		case 13:
			h.PendingBytes = s.ExactInt(64)
		case 14:
			h.LastError = s.ExactString()
		case 15:
			h.StoppedAt = s.ExactString()
		case 16:
			h.Pacing = int(s.ExactInt(strconv.IntSize))
		case 17:
			h.Confirmed = int(s.ExactInt(strconv.IntSize))
		case 18:
			h.Unconfirmed = int(s.ExactInt(strconv.IntSize))
		case -1:
			s.Skip(1)
		default:
			return false
		}
		return true
	}) {
		return h, true
	}
	return inboxv1.Heartbeat{}, false
}

var ackKeys = [...]string{
	"ts", "sha256", "session_id", "peer_status", "class", "msg_id", "line_offset", "inode", "gen", "from",
	"peer_status_raw", "doorman_pid", "v", "reason", "paced_ms", "confirm", "queued_at", "priority",
}

// decodeAck decodes an ack line as json.Unmarshal into an inboxv1.Ack
// does.
func decodeAck(b []byte) (inboxv1.Ack, error) { return jsonscan.Unmarshal(b, scanAck) }

// scanAck is decodeAck's one pass; ok is false when the scanner bailed.
func scanAck(b []byte) (a inboxv1.Ack, ok bool) {
	s := jsonscan.New(b)
	var seen [len(ackKeys)]bool
	if s.Whole(func(key []byte) bool {
		switch jsonscan.FieldIndex(key, seen[:], ackKeys[:]...) {
		case 0:
			a.TS = s.ExactString()
		case 1:
			a.SHA256 = s.ExactString()
		case 2:
			a.SessionID = s.ExactString()
		case 3:
			a.PeerStatus = s.ExactString()
		case 4:
			a.Class = inboxv1.AckClass(s.ExactString())
		case 5:
			a.MsgID = s.ExactString()
		case 6:
			if s.Peek() == 'n' {
				s.Null()
				break
			}
			v := s.ExactInt(64)
			a.LineOffset = &v
		case 7:
			a.Inode = s.ExactUint(64)
		case 8:
			a.Gen = s.ExactString()
		case 9:
			a.From = s.ExactString()
		case 10:
			a.PeerStatusRaw = s.ExactString()
		case 11:
			a.DoormanPID = int(s.ExactInt(strconv.IntSize))
		case 12:
			a.V = int(s.ExactInt(strconv.IntSize))
		case 13:
			a.Reason = s.ExactString()
		case 14:
			a.PacedMS = s.ExactInt(64)
		case 15:
			a.Confirm = s.ExactString()
		case 16:
			if s.Peek() == 'n' {
				s.Null()
				break
			}
			v := s.ExactString()
			a.QueuedAt = &v
		case 17:
			a.Priority = s.ExactString()
		case -1:
			s.Skip(1)
		default:
			return false
		}
		return true
	}) {
		return a, true
	}
	return inboxv1.Ack{}, false
}

// EncodeAck is json.Marshal(a), written field by field (jsonw): the
// doorman's ack lines, and the ack a send's verdict row carries. An ack
// holds nothing only encoding/json writes exactly, so it never falls back
// in practice; TestEncodeAck holds the bytes to json.Marshal's.
func EncodeAck(a inboxv1.Ack) ([]byte, error) {
	e := jsonw.Encoder{B: make([]byte, 0, 512)}
	e.B = append(e.B, `{"ts":`...)
	e.Str(a.TS)
	e.B = append(e.B, `,"sha256":`...)
	e.Str(a.SHA256)
	e.B = append(e.B, `,"session_id":`...)
	e.Str(a.SessionID)
	e.B = append(e.B, `,"peer_status":`...)
	e.Str(a.PeerStatus)
	e.B = append(e.B, `,"class":`...)
	e.Str(string(a.Class))
	e.B = append(e.B, `,"msg_id":`...)
	e.Str(a.MsgID)
	if a.LineOffset != nil {
		e.B = append(e.B, `,"line_offset":`...)
		e.Int(*a.LineOffset)
	}
	if a.Inode != 0 {
		e.B = append(e.B, `,"inode":`...)
		e.Uint(a.Inode)
	}
	for _, kv := range [...]struct {
		key, v string
	}{{`,"gen":`, a.Gen}, {`,"from":`, a.From}, {`,"peer_status_raw":`, a.PeerStatusRaw}} {
		if kv.v != "" {
			e.B = append(e.B, kv.key...)
			e.Str(kv.v)
		}
	}
	if a.DoormanPID != 0 {
		e.B = append(e.B, `,"doorman_pid":`...)
		e.Int(int64(a.DoormanPID))
	}
	if a.V != 0 {
		e.B = append(e.B, `,"v":`...)
		e.Int(int64(a.V))
	}
	if a.Reason != "" {
		e.B = append(e.B, `,"reason":`...)
		e.Str(a.Reason)
	}
	if a.PacedMS != 0 {
		e.B = append(e.B, `,"paced_ms":`...)
		e.Int(a.PacedMS)
	}
	if a.Confirm != "" {
		e.B = append(e.B, `,"confirm":`...)
		e.Str(a.Confirm)
	}
	e.B = append(e.B, `,"queued_at":`...)
	e.StrPtr(a.QueuedAt)
	if a.Priority != "" {
		e.B = append(e.B, `,"priority":`...)
		e.Str(a.Priority)
	}
	e.B = append(e.B, '}')
	if e.Fallback {
		return json.Marshal(a)
	}
	return e.B, nil
}
