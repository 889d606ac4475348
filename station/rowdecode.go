package station

import (
	"strconv"

	"github.com/oo-family/oo-claude/internal/jsonscan"
)

// rowKeys are the JSON keys of Row's fields, in its order.
var rowKeys = [...]string{
	"pid", "sessionId", "cwd", "startedAt", "procStart", "version", "peerProtocol", "peerFeatures", "kind",
	"entrypoint", "pidDomain", "asksForConvertedSkills", "messagingSocketPath", "name", "nameSource",
	"nameSince", "hostSessionId", "status", "waitingFor", "updatedAt", "statusUpdatedAt",
}

// decodeRow decodes a registry file's content as json.Unmarshal into a
// Row does, in one pass with jsonscan's exact readers for the rows Claude
// Code writes: a send decodes its target's row, a sessions document every
// row, and encoding/json's first decode of Row in a process builds its
// field table (tens of microseconds, before a send's door write). A row
// the scanner is not sure to read as encoding/json does (a waitingFor or
// asksForConvertedSkills that is not null, FieldIndex's keys, a value of
// another type, invalid JSON) goes to encoding/json; FuzzDecodeRow holds
// the two to the same result.
func decodeRow(b []byte) (Row, error) { return jsonscan.Unmarshal(b, scanRow) }

// scanRow is decodeRow's one pass; ok is false when the scanner bailed.
func scanRow(b []byte) (r Row, ok bool) {
	s := jsonscan.New(b)
	var seen [len(rowKeys)]bool
	if !s.Whole(func(key []byte) bool {
		switch jsonscan.FieldIndex(key, seen[:], rowKeys[:]...) {
		case 0:
			r.PID = int(s.ExactInt(strconv.IntSize))
		case 1:
			r.SessionID = s.ExactString()
		case 2:
			r.CWD = s.ExactString()
		case 3:
			r.StartedAt = s.ExactInt(64)
		case 4:
			r.ProcStart = s.ExactString()
		case 5:
			r.Version = s.ExactString()
		case 6:
			r.PeerProtocol = int(s.ExactInt(strconv.IntSize))
		case 7:
			r.PeerFeatures = s.ExactStrings(1)
		case 8:
			r.Kind = s.ExactString()
		case 9:
			r.Entrypoint = s.ExactString()
		case 10:
			r.PidDomain = s.ExactString()
		case 11, 18:
			s.Null() // asksForConvertedSkills, waitingFor: anything but null is encoding/json's
		case 12:
			r.MessagingSocketPath = s.ExactString()
		case 13:
			r.Name = s.ExactString()
		case 14:
			r.NameSource = s.ExactString()
		case 15:
			r.NameSince = s.ExactInt(64)
		case 16:
			r.HostSessionID = s.ExactString()
		case 17:
			r.Status = s.ExactString()
		case 19:
			r.UpdatedAt = s.ExactInt(64)
		case 20:
			r.StatusUpdatedAt = s.ExactInt(64)
		case -1:
			s.Skip(1)
		default:
			return false
		}
		return true
	}) {
		return Row{}, false
	}
	return r, true
}
