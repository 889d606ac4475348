package station

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// maxStationFile bounds the read of the station file: a knob file of a
// few hundred bytes, never a surprise of gigabytes.
const maxStationFile = 64 << 10

// Knobs returns the names of every knob [ConfigFromEnv] reads (and the
// station file may set), in the README's order.
func Knobs() []string {
	return []string{
		"CLAUDE_CONFIG_DIR",
		"OO_CLAUDE_STATION",
		"OO_CLAUDE_SESSIONS_DIR",
		"OO_CLAUDE_PROJECTS_DIR",
		"OO_CLAUDE_INBOX_DIR",
		"OO_CLAUDE_STATE_DIR",
		"OO_CLAUDE_OBSERVATORY_DIR",
		"OO_CLAUDE_BIN",
		"OO_CLAUDE_SYSTEMD_RUN",
		"OO_CLAUDE_DOORMAN",
		"OO_CLAUDE_DOORMAN_PYTHON",
		"OO_CLAUDE_DOORMAN_POLL_S",
		"OO_CLAUDE_DOORMAN_HEARTBEAT_S",
		"OO_CLAUDE_DOOR_SETTLE_S",
		"OO_CLAUDE_DOOR_CONFIRM_S",
		"OO_CLAUDE_WAIT_S",
		"OO_CLAUDE_MIN_INTERVAL_S",
		"OO_CLAUDE_RESUME_MODEL",
		"OO_CLAUDE_RESUME_TIMEOUT_S",
		"OO_CLAUDE_START_MODEL",
		"OO_CLAUDE_START_TIMEOUT_S",
		"OO_CLAUDE_RIDING_WINDOW_S",
		"OO_CLAUDE_DOCTOR_MCP",
		"OO_CLAUDE_SSH",
		"OO_CLAUDE_REMOTE_BIN",
	}
}

// StationFilePath is where the station file lives:
// $XDG_CONFIG_HOME/oo-claude/station.env, else
// ~/.config/oo-claude/station.env (a relative XDG_CONFIG_HOME is ignored,
// as the XDG base directory rules say). It is "" when neither HOME nor an
// absolute XDG_CONFIG_HOME is set.
func StationFilePath(getenv func(string) string) string {
	if getenv == nil {
		getenv = unset
	}
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "oo-claude", "station.env")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "oo-claude", "station.env")
	}
	return ""
}

// ErrStationFile is wrapped by every [StationFileError].
var ErrStationFile = errors.New("bad station file")

// StationFileError reports a station file that cannot be used: a line
// that is not KEY=VALUE of a knob (Line > 0), or a file that cannot be read
// (Line 0).
type StationFileError struct {
	Path string
	Line int
	Err  error
}

func (e *StationFileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("station file %s, line %d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("station file %s: %v", e.Path, e.Err)
}

func (e *StationFileError) Unwrap() error { return e.Err }

// Origins of a knob's value ([Environ.Origin]).
const (
	OriginEnvironment = "environment"
	OriginDefault     = "default"
)

// Environ is the environment the knobs are read from: the process
// environment over the station file, so a shell, a cron job and an
// `ssh host oo-claude …` all see the same station. Build it with
// [LoadEnviron]; its Getenv is what [ConfigFromEnv] takes.
type Environ struct {
	// File is the station file's path ("" when there is none to read);
	// it need not exist.
	File   string
	getenv func(string) string
	values map[string]string
	lines  map[string]int
}

// LoadEnviron reads the station file named by [StationFilePath] through
// getenv (nil is an environment with nothing set) and returns the
// environment layered over it. A missing file is an empty one; a file
// that is a symlink, not a regular file, another user's or writable by
// others, or that holds a line other than a comment, a blank or
// KNOB=VALUE, is a *[StationFileError] naming the file and line.
//
// VALUE is taken as written after the "=" (surrounding blanks trimmed,
// one pair of matching quotes removed); nothing is expanded.
func LoadEnviron(getenv func(string) string) (*Environ, error) {
	if getenv == nil {
		getenv = unset
	}
	e := &Environ{File: StationFilePath(getenv), getenv: getenv, values: map[string]string{}, lines: map[string]int{}}
	if e.File == "" {
		return e, nil
	}
	f, err := fsx.OpenRead(e.File)
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return e, &StationFileError{Path: e.File, Err: fmt.Errorf("%w: %w", ErrStationFile, err)}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStationFile+1))
	if err != nil {
		return e, &StationFileError{Path: e.File, Err: fmt.Errorf("%w: %w", ErrStationFile, err)}
	}
	if len(b) > maxStationFile {
		return e, &StationFileError{Path: e.File, Err: fmt.Errorf("%w: larger than %d bytes", ErrStationFile, maxStationFile)}
	}
	knobs := Knobs()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxStationFile+1)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(format string, a ...any) error {
			return &StationFileError{Path: e.File, Line: n, Err: fmt.Errorf("%w: %s", ErrStationFile, fmt.Sprintf(format, a...))}
		}
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(strings.TrimPrefix(key, "export "))
		switch {
		case !ok:
			return e, bad("want KNOB=VALUE, got %s", strconv.Quote(line))
		case !slices.Contains(knobs, key):
			return e, bad("%s is not an oo-claude knob (the README's \"Knobs\" lists them)", strconv.Quote(key))
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			val = val[1 : len(val)-1]
		}
		e.values[key], e.lines[key] = val, n
	}
	if err := sc.Err(); err != nil {
		return e, &StationFileError{Path: e.File, Err: fmt.Errorf("%w: %w", ErrStationFile, err)}
	}
	return e, nil
}

// Getenv returns key's value: the environment's when set there, else the
// station file's, else "".
func (e *Environ) Getenv(key string) string {
	if e.getenv != nil {
		if v := e.getenv(key); v != "" {
			return v
		}
	}
	return e.values[key]
}

// Origin says where key's value comes from: [OriginEnvironment], the
// station file's path and line ("/home/u/.config/oo-claude/station.env:3"),
// or [OriginDefault] when neither sets it.
func (e *Environ) Origin(key string) string {
	switch {
	case e == nil:
		return OriginDefault
	case e.getenv != nil && e.getenv(key) != "":
		return OriginEnvironment
	case e.values[key] != "":
		return e.File + ":" + strconv.Itoa(e.lines[key])
	}
	return OriginDefault
}
