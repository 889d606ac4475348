// Package ids makes the random identifiers oo-claude writes: the session
// id of a session it starts, a delivery's msg_id and a doorman's
// generation, each a version 4 UUID (RFC 9562) in its canonical form.
//
// It is written here, not taken from github.com/google/uuid, for the cost
// of a process's start: that package's v1 node code links net (and with
// it net/netip, dnsmessage, crypto/md5, crypto/sha1 and database/sql/driver)
// into every oo-claude process, whose package init each send pays before
// its first system call (BENCHMARKS.md, "A start without net"). Only the
// random kind is made, so only crypto/rand is needed.
package ids

import "crypto/rand"

// New returns a random version 4 UUID in its canonical lower-case form,
// 8-4-4-4-12 hex digits, from crypto/rand (which does not fail: see
// [rand.Read]).
func New() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant 10 (RFC 9562)
	const hex = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hex[c>>4], hex[c&0x0f]
		j += 2
	}
	return string(b[:])
}
