package station_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/oo-family/oo-claude/station"
)

// TestLoadEnviron: the station file under the environment, each value's
// origin, the XDG rule, and a bad line named by file and line.
func TestLoadEnviron(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	xdg := filepath.Join(home, "xdg")
	p := filepath.Join(xdg, "oo-claude", "station.env")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("# comment\n\nOO_CLAUDE_WAIT_S=7\nexport OO_CLAUDE_STATION = 'far away'\nCLAUDE_CONFIG_DIR=/c\n")
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg, "CLAUDE_CONFIG_DIR": "/env"}
	e, err := station.LoadEnviron(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ key, val, from string }{
		{"OO_CLAUDE_WAIT_S", "7", p + ":3"},
		{"OO_CLAUDE_STATION", "far away", p + ":4"},
		{"CLAUDE_CONFIG_DIR", "/env", station.OriginEnvironment},
		{"OO_CLAUDE_BIN", "", station.OriginDefault},
		{"HOME", home, station.OriginEnvironment},
	} {
		if v, from := e.Getenv(tt.key), e.Origin(tt.key); v != tt.val || from != tt.from {
			t.Errorf("%s = %q from %q, want %q from %q", tt.key, v, from, tt.val, tt.from)
		}
	}
	c, err := station.ConfigFromEnv(e.Getenv)
	if err != nil || c.Wait.Seconds() != 7 || c.StationName("u", "h", home) != "far away" {
		t.Errorf("config: wait %v station %q err %v", c.Wait, c.StationName("u", "h", home), err)
	}

	// Without XDG_CONFIG_HOME (or with a relative one) the file is under ~/.config.
	if got := station.StationFilePath(func(k string) string { return map[string]string{"HOME": home, "XDG_CONFIG_HOME": "rel"}[k] }); got != filepath.Join(home, ".config", "oo-claude", "station.env") {
		t.Errorf("StationFilePath = %s", got)
	}
	if got := station.StationFilePath(nil); got != "" {
		t.Errorf("StationFilePath(nil) = %q", got)
	}

	for _, bad := range []string{"OO_CLAUDE_WAIT_S=1\nNOT_A_KNOB=1\n", "OO_CLAUDE_WAIT_S=1\nno equals sign\n"} {
		write(bad)
		_, err := station.LoadEnviron(func(k string) string { return env[k] })
		var se *station.StationFileError
		if !errors.As(err, &se) || se.Line != 2 || se.Path != p || !errors.Is(err, station.ErrStationFile) {
			t.Errorf("%q: %v, want a StationFileError at line 2", bad, err)
		}
	}
	os.Remove(p)
	if err := os.Symlink(filepath.Join(home, "elsewhere"), p); err != nil {
		t.Fatal(err)
	}
	if _, err := station.LoadEnviron(func(k string) string { return env[k] }); !errors.Is(err, station.ErrStationFile) {
		t.Errorf("symlinked station file: %v, want ErrStationFile", err)
	}

	// Default names: user@host, the config dir when it is not ~/.claude.
	for _, tt := range []struct {
		cd, want string
	}{{filepath.Join(home, ".claude"), "u@h"}, {"/other", "u@h:/other"}} {
		c := station.DefaultConfig(station.Paths{ConfigDir: tt.cd})
		if got := c.StationName("u", "h", home); got != tt.want {
			t.Errorf("StationName with %s = %q, want %q", tt.cd, got, tt.want)
		}
	}
}
