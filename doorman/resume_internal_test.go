package doorman

import (
	"strings"
	"testing"
)

// TestResumePoint is the table of where a starting doorman resumes: the
// offset, or 0 with a new generation when the file is not the one the
// offset and the acks were written for.
func TestResumePoint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     resumeFacts
		off   int64
		fresh string // a fragment of the reason; "" resumes at the offset
	}{
		{"first start, empty file", resumeFacts{inode: 7}, 0, ""},
		{"no offset file, monitor-era offset adopted", resumeFacts{inode: 7, offset: 40, size: 100}, 40, ""},
		{"verified offset", resumeFacts{inode: 7, offset: 40, verify: true, size: 100, endsLastAck: true}, 40, ""},
		{"verified offset at the end", resumeFacts{inode: 7, offset: 100, verify: true, size: 100, endsLastAck: true}, 100, ""},
		{"same inode as the last heartbeat", resumeFacts{prevInode: 7, inode: 7, offset: 40, verify: true, size: 100, endsLastAck: true}, 40, ""},
		{"no heartbeat inode", resumeFacts{inode: 8, offset: 40, verify: true, size: 100, endsLastAck: true}, 40, ""},
		{"replaced while no doorman ran", resumeFacts{prevInode: 7, inode: 8, offset: 40, verify: true, size: 100, endsLastAck: true}, 0, "replaced"},
		{"replaced, but the attempt names its generation", resumeFacts{prevInode: 7, inode: 8, genKnown: true, offset: 40, verify: true, size: 100, endsLastAck: true}, 40, ""},
		{"offset beyond the file", resumeFacts{inode: 7, offset: 140, verify: true, size: 100}, 0, "beyond the file"},
		{"unverified offset beyond the file", resumeFacts{inode: 7, offset: 140, size: 100}, 0, "beyond the file"},
		{"offset not ending the last acked line", resumeFacts{inode: 7, offset: 40, verify: true, size: 100}, 0, "does not end the last acked line"},
		{"unreadable offset file: from the acks", resumeFacts{inode: 7, offset: 0, size: 100}, 0, ""},
		{"refilled to the same size", resumeFacts{inode: 7, offset: 100, verify: true, size: 100, endsLastAck: true, modifiedSince: true}, 0, "not grown past it"},
		{"modified and grown past the offset", resumeFacts{inode: 7, offset: 40, verify: true, size: 100, endsLastAck: true, modifiedSince: true}, 40, ""},
		{"offset 0 is never verified", resumeFacts{inode: 7, offset: 0, verify: true, size: 100}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off, fresh := resumePoint(tc.f)
			if off != tc.off || (tc.fresh == "") != (fresh == "") || !strings.Contains(fresh, tc.fresh) {
				t.Errorf("resumePoint(%+v) = %d, %q; want %d, %q", tc.f, off, fresh, tc.off, tc.fresh)
			}
		})
	}
}
