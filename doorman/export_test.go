package doorman

import (
	"time"
)

// StartAcks is what a start keeps of the ack file at path for a resume at
// off: the line_offset of the last ack before off (-1 for none), the acks
// at or after off, and how many recent deliveries seed the pacer.
func StartAcks(path string, inode uint64, off int64, g Guard, now time.Time) (last int64, after map[int64]string, recent int) {
	st := scanStartAcks(path, inode, off, newPacer(g), now)
	last = -1
	if st.hasLast {
		last = *st.last.LineOffset
	}
	return last, st.after, len(st.recent)
}
