package fleet

import "strings"

// SplitTarget reads target as STATION/SESSION, the address of a session
// across a merged view of the stations dests (their Host.Dest, the
// "station" of the merged sessions document and of a merged watch's
// events): when target begins with one of dests and a slash, it returns
// that destination and the rest (the session's id, name or pid on it),
// else ok is false. The longest matching destination wins, so
// ssh://user@host:2222 and its sessions split where they should.
func SplitTarget(dests []string, target string) (dest, session string, ok bool) {
	for _, d := range dests {
		if d != "" && len(d) > len(dest) && strings.HasPrefix(target, d+"/") && len(target) > len(d)+1 {
			dest, session, ok = d, target[len(d)+1:], true
		}
	}
	return dest, session, ok
}
