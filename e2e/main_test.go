package e2e

import (
	"net"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(probeModeEnv) == "mcp" {
		os.Exit(runProbe())
	}
	goleak.VerifyTestMain(m)
}

func dialUnix(path string) (*net.UnixConn, error) {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return c.(*net.UnixConn), nil
}
