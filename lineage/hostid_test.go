package lineage

import (
	"regexp"
	"strings"
	"testing"
)

// hostIDRE is the shape isHostID matches by hand, kept here as its oracle.
var hostIDRE = regexp.MustCompile(`^local_[0-9a-f-]{8,72}$`)

// FuzzIsHostID holds isHostID to the regular expression it replaces.
func FuzzIsHostID(f *testing.F) {
	for _, s := range []string{
		"", "local_", "local_0123456", "local_01234567", "local_" + strings.Repeat("a", 72), "local_" + strings.Repeat("a", 73),
		"local_0123456G", "local_DEADBEEF", "local_dead-beef-0000", "xlocal_01234567", "local_01234567\n", "Local_01234567",
		"local_0123456é", "local_--------",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isHostID(s), hostIDRE.MatchString(s); got != want {
			t.Fatalf("isHostID(%q) = %v; the regular expression says %v", s, got, want)
		}
	})
}
