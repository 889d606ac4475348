package doctor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/oo-family/oo-claude/doctor"
	"github.com/oo-family/oo-claude/station"
)

// A station whose claude answers as Claude Code does, run outside a
// session and without `claude mcp get`: every check is ok or skipped.
func ExampleRun() {
	home, err := os.MkdirTemp("", "doctor-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(home)
	cfg, err := station.ConfigFromEnv(func(k string) string { return map[string]string{"HOME": home}[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range []string{cfg.SessionsDir, cfg.InboxDir} {
		_ = os.MkdirAll(d, 0o700)
	}
	cfg.ClaudeBin = filepath.Join(home, "claude")
	_ = os.WriteFile(cfg.ClaudeBin, []byte("#!/bin/sh\n"), 0o700)
	cfg.DoctorMCP = false
	rep := doctor.Run(context.Background(), doctor.Options{
		Config: cfg,
		// The seam claude runs through; here, an answer as Claude Code's.
		Exec: func(ctx context.Context, name string, args ...string) ([]byte, int, error) {
			return []byte("2.1.332 (Claude Code)\n"), 0, nil
		},
	})
	for _, c := range rep.Checks {
		fmt.Println(c.Name, c.Status)
	}
	fmt.Println("ok:", rep.OK())
	// Output:
	// binary ok
	// programs skipped
	// registry ok
	// inbox-dir ok
	// state-dir ok
	// mcp skipped
	// doorman skipped
	// offline-inboxes ok
	// doorman-dirs ok
	// sockets ok
	// ok: true
}
