package station_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/oo-family/oo-claude/station"
)

// A station reads Claude Code's registry: a row counts when its pid runs
// with the row's procStart, and a target resolves by id, pid, name, name
// fragment or id prefix.
func ExampleStation_Resolve() {
	dir, _ := os.MkdirTemp("", "station-example")
	defer os.RemoveAll(dir)
	paths := station.Paths{SessionsDir: filepath.Join(dir, "sessions")}
	os.MkdirAll(paths.SessionsDir, 0o700)

	// This process plays a running session: its row names its real start time.
	self, _ := station.Proc{}.Info(os.Getpid())
	row := fmt.Sprintf(`{"pid":%d,"sessionId":"017c3f59-43cc-4dc8-bfb6-5e9a5625a864","cwd":"/home/u/proj",`+
		`"procStart":%q,"name":"proj-e9","status":"busy"}`, os.Getpid(), self.StartTicks)
	os.WriteFile(filepath.Join(paths.SessionsDir, strconv.Itoa(os.Getpid())+".json"), []byte(row), 0o644)

	st := station.New(paths)
	for _, target := range []string{"proj-e9", "017c3f59", "ab9d6a1c-0000-4000-8000-000000000000", "nobody"} {
		t, err := st.Resolve(target)
		if err != nil {
			fmt.Printf("%-38s %v\n", target, err)
			continue
		}
		fmt.Printf("%-38s %s running=%v by %s\n", target, t.SessionID, t.Running, t.MatchedBy)
	}
	// Output:
	// proj-e9                                017c3f59-43cc-4dc8-bfb6-5e9a5625a864 running=true by name
	// 017c3f59                               017c3f59-43cc-4dc8-bfb6-5e9a5625a864 running=true by prefix
	// ab9d6a1c-0000-4000-8000-000000000000   ab9d6a1c-0000-4000-8000-000000000000 running=false by id
	// nobody                                 unknown target "nobody"
}
