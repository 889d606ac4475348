package station_test

import (
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/station"
)

// BenchmarkResolve resolves one live session among rows live registry rows
// (each the row of a sleep process of its own, with its real procStart), by
// full id, by pid and by name. The target is the newest row; every other
// row is unrelated to it. The rows are settled (changed more than
// fsx.SigSettle ago), as a station's are but for the few that just changed.
func BenchmarkResolve(b *testing.B) {
	for _, rows := range []int{1, 50, 500} {
		fs := fakestation.New(b)
		var target station.Row
		for i := 0; i < rows; i++ {
			cmd := exec.Command("sleep", "600")
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			target = fs.AddSession(fakestation.Session{PID: cmd.Process.Pid, Name: fmt.Sprintf("proj%03d-aa", i)})
		}
		st := fs.Station()
		// A station's rows are not all new: wait until the newest is
		// settled, so the row cache can keep them (rowcache.go).
		time.Sleep(fsx.SigSettle + 100*time.Millisecond)
		for _, by := range []struct{ name, target string }{
			{"id", target.SessionID},
			{"pid", strconv.Itoa(target.PID)},
			{"name", target.Name},
		} {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, by.name), func(b *testing.B) {
				for b.Loop() {
					t, err := st.Resolve(by.target)
					if err != nil || t.SessionID != target.SessionID {
						b.Fatalf("Resolve(%q) = %+v, %v", by.target, t, err)
					}
				}
			})
		}
	}
}
