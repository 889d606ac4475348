package fakesession_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestExampleModule builds and runs the tests of examples/ask, a module of
// its own (a replace directive points it at this checkout), as another
// project would use the fakes: it asks a fake session and gets its
// scripted answer.
func TestExampleModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds another module")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		if gobin, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command")
		}
	}
	cmd := exec.Command(gobin, "test", "-count=1", "./...")
	cmd.Dir = filepath.Join("..", "..", "examples", "ask")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test in examples/ask: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
