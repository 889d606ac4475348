package station

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/internal/seconds"
)

// Paths are the directories oo-claude reads and writes. [PathsFromEnv] fills
// them from the knobs, with their defaults (COMPATIBILITY.md, "Knobs").
type Paths struct {
	ConfigDir      string // $CLAUDE_CONFIG_DIR (a relative one against the working directory, as Claude Code takes it), else ~/.claude
	SessionsDir    string // OO_CLAUDE_SESSIONS_DIR, else <config>/sessions: the registry
	ProjectsDir    string // OO_CLAUDE_PROJECTS_DIR, else <config>/projects: transcripts
	InboxDir       string // OO_CLAUDE_INBOX_DIR, else ~/.zcode/tmp/claude-inbox
	StateDir       string // OO_CLAUDE_STATE_DIR, else ~/.local/state/oo-claude
	ObservatoryDir string // OO_CLAUDE_OBSERVATORY_DIR, else ~/.zcode/tmp/claude-observatory
}

// ReceiptsFile is <state>/receipts.jsonl.
func (p Paths) ReceiptsFile() string { return filepath.Join(p.StateDir, "receipts.jsonl") }

// LineageFile is <observatory>/lineage.jsonl.
func (p Paths) LineageFile() string { return filepath.Join(p.ObservatoryDir, "lineage.jsonl") }

// ErrNoHome reports that a default path was needed but HOME is not set.
var ErrNoHome = errors.New("HOME is not set")

// PathsFromEnv returns the paths named by the knobs, read through getenv
// (nil is an environment with nothing set).
func PathsFromEnv(getenv func(string) string) (Paths, error) {
	if getenv == nil {
		getenv = unset
	}
	home := getenv("HOME")
	need := func(rel string) (string, error) {
		if home == "" {
			return "", fmt.Errorf("default for %s: %w", rel, ErrNoHome)
		}
		return filepath.Join(home, rel), nil
	}
	var relErrs []error
	// abs refuses a relative directory knob: it would put the station under
	// whatever directory each process happens to run in.
	abs := func(knob, v string) string {
		if !filepath.IsAbs(v) {
			relErrs = append(relErrs, &KnobError{knob, v, fmt.Errorf("%w: must be an absolute path", ErrBadKnob)})
		}
		return filepath.Clean(v)
	}
	pick := func(knob, rel string) (string, error) {
		if v := getenv(knob); v != "" {
			return abs(knob, v), nil
		}
		return need(rel)
	}
	var p Paths
	var err error
	if v := getenv("CLAUDE_CONFIG_DIR"); v != "" {
		// Claude Code's own variable, not an oo-claude knob: Claude Code
		// 2.1.332 takes a relative value against its working directory
		// (no "~" expansion) and hands it on as it is to the processes it
		// starts (its MCP servers, the doorman among them, run there too),
		// so oo-claude resolves it the same way.
		cd, err := filepath.Abs(v)
		if err != nil {
			relErrs = append(relErrs, &KnobError{"CLAUDE_CONFIG_DIR", v, fmt.Errorf("%w: relative, and the working directory is unknown: %w", ErrBadKnob, err)})
		}
		p.ConfigDir = cd
	} else if p.ConfigDir, err = need(".claude"); err != nil {
		return Paths{}, err
	}
	p.SessionsDir = filepath.Join(p.ConfigDir, "sessions")
	if v := getenv("OO_CLAUDE_SESSIONS_DIR"); v != "" {
		p.SessionsDir = abs("OO_CLAUDE_SESSIONS_DIR", v)
	}
	p.ProjectsDir = filepath.Join(p.ConfigDir, "projects")
	if v := getenv("OO_CLAUDE_PROJECTS_DIR"); v != "" {
		p.ProjectsDir = abs("OO_CLAUDE_PROJECTS_DIR", v)
	}
	if p.InboxDir, err = pick("OO_CLAUDE_INBOX_DIR", ".zcode/tmp/claude-inbox"); err != nil {
		return Paths{}, err
	}
	if p.StateDir, err = pick("OO_CLAUDE_STATE_DIR", ".local/state/oo-claude"); err != nil {
		return Paths{}, err
	}
	if p.ObservatoryDir, err = pick("OO_CLAUDE_OBSERVATORY_DIR", ".zcode/tmp/claude-observatory"); err != nil {
		return Paths{}, err
	}
	if len(relErrs) > 0 {
		return Paths{}, errors.Join(relErrs...)
	}
	return p, nil
}

// Config is every environment knob (COMPATIBILITY.md, "Knobs"), parsed.
// The zero value is not useful; start from [ConfigFromEnv] or
// [DefaultConfig].
type Config struct {
	Paths

	ClaudeBin  string // OO_CLAUDE_BIN: the claude binary, never looked up in PATH
	SystemdRun string // OO_CLAUDE_SYSTEMD_RUN

	DoormanEnabled   bool          // OO_CLAUDE_DOORMAN (0 silences a doorman)
	DoormanPoll      time.Duration // OO_CLAUDE_DOORMAN_POLL_S: the doorman's safety poll (file events do the work)
	DoormanHeartbeat time.Duration // OO_CLAUDE_DOORMAN_HEARTBEAT_S
	DoorSettle       time.Duration // OO_CLAUDE_DOOR_SETTLE_S: the settle of a delivery whose transcript cannot be located
	DoorConfirm      time.Duration // OO_CLAUDE_DOOR_CONFIRM_S: how long the doorman waits for the receiver's enqueue row; 0 turns confirmation off (every ack rests on the settle)

	Wait        time.Duration // OO_CLAUDE_WAIT_S: how long send waits for the ack
	MinInterval time.Duration // OO_CLAUDE_MIN_INTERVAL_S: the send throttle per target and sender

	ResumeModel   string        // OO_CLAUDE_RESUME_MODEL
	ResumeTimeout time.Duration // OO_CLAUDE_RESUME_TIMEOUT_S
	StartModel    string        // OO_CLAUDE_START_MODEL
	StartTimeout  time.Duration // OO_CLAUDE_START_TIMEOUT_S

	RidingWindow time.Duration // OO_CLAUDE_RIDING_WINDOW_S
	DoctorMCP    bool          // OO_CLAUDE_DOCTOR_MCP (0 skips claude mcp get)

	// Station is OO_CLAUDE_STATION, the station's name; "" means the
	// default [Config.StationName] makes.
	Station string
	// SSH is OO_CLAUDE_SSH split at blanks: the ssh client's command line
	// for the verbs' --host (nil means "ssh").
	SSH []string
	// RemoteBin is OO_CLAUDE_REMOTE_BIN: the oo-claude command on other
	// stations ("" means oo-claude from the remote PATH, else
	// ~/go/bin/oo-claude).
	RemoteBin string
}

// StationName is the station's name: OO_CLAUDE_STATION when set, else
// user@host, followed by ":" and the config dir when CLAUDE_CONFIG_DIR
// is another directory than home's .claude (two stations of one user on
// one host).
func (c Config) StationName(user, host, home string) string {
	if c.Station != "" {
		return c.Station
	}
	n := user + "@" + host
	if c.ConfigDir != "" && (home == "" || filepath.Clean(c.ConfigDir) != filepath.Join(home, ".claude")) {
		n += ":" + c.ConfigDir
	}
	return n
}

// DefaultConfig returns the knobs' defaults (COMPATIBILITY.md, "Knobs")
// for everything but the paths.
func DefaultConfig(p Paths) Config {
	return Config{
		Paths:            p,
		ClaudeBin:        "/usr/bin/claude",
		SystemdRun:       "/usr/bin/systemd-run",
		DoormanEnabled:   true,
		DoormanPoll:      5 * time.Second,
		DoormanHeartbeat: 5 * time.Second,
		DoorSettle:       250 * time.Millisecond,
		DoorConfirm:      2 * time.Second,
		Wait:             5 * time.Second,
		MinInterval:      30 * time.Second,
		ResumeModel:      "claude-haiku-5-5",
		ResumeTimeout:    300 * time.Second,
		StartModel:       "claude-haiku-5-5",
		StartTimeout:     900 * time.Second,
		RidingWindow:     600 * time.Second,
		DoctorMCP:        true,
	}
}

// KnobError reports an environment knob whose value cannot be used.
type KnobError struct {
	Knob  string
	Value string
	Err   error
}

func (e *KnobError) Error() string {
	return fmt.Sprintf("%s=%q: %v", e.Knob, e.Value, e.Err)
}

func (e *KnobError) Unwrap() error { return e.Err }

// ErrBadKnob is wrapped by every [KnobError].
var ErrBadKnob = errors.New("bad value")

// ConfigFromEnv reads every knob through getenv (nil is an environment
// with nothing set). A knob that is set to a value it cannot take is an error (a
// *KnobError), never silently the default.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = unset
	}
	p, err := PathsFromEnv(getenv)
	if err != nil {
		return Config{}, err
	}
	c := DefaultConfig(p)
	var errs []error
	str := func(knob string, dst *string) {
		if v := getenv(knob); v != "" {
			if !filepath.IsAbs(v) && (knob == "OO_CLAUDE_BIN" || knob == "OO_CLAUDE_SYSTEMD_RUN") {
				errs = append(errs, &KnobError{knob, v, fmt.Errorf("%w: must be an absolute path", ErrBadKnob)})
				return
			}
			*dst = v
		}
	}
	secs := func(knob string, dst *time.Duration, allowZero bool) {
		v := getenv(knob)
		if v == "" {
			return
		}
		// A plain decimal (an exponent as in "1e-3" is one) up to
		// seconds.Max: a hex float ("0x1p1"), an infinity, NaN or a sign
		// is not a number of seconds anyone means.
		d, ok := seconds.Parse(v, allowZero)
		if !ok {
			errs = append(errs, &KnobError{knob, v, fmt.Errorf("%w: want %s", ErrBadKnob, seconds.Want(allowZero))})
			return
		}
		*dst = d
	}
	flag := func(knob string, dst *bool) {
		switch v := getenv(knob); v {
		case "":
		case "0", "false", "no", "off":
			*dst = false
		case "1", "true", "yes", "on":
			*dst = true
		default:
			errs = append(errs, &KnobError{knob, v, fmt.Errorf("%w: want 0 or 1", ErrBadKnob)})
		}
	}
	str("OO_CLAUDE_BIN", &c.ClaudeBin)
	str("OO_CLAUDE_SYSTEMD_RUN", &c.SystemdRun)
	// OO_CLAUDE_DOORMAN_PYTHON (v0.1's doorman interpreter) is accepted
	// with any value and not read: the Go doorman needs no interpreter.
	flag("OO_CLAUDE_DOORMAN", &c.DoormanEnabled)
	secs("OO_CLAUDE_DOORMAN_POLL_S", &c.DoormanPoll, false)
	secs("OO_CLAUDE_DOORMAN_HEARTBEAT_S", &c.DoormanHeartbeat, false)
	secs("OO_CLAUDE_DOOR_SETTLE_S", &c.DoorSettle, true)
	secs("OO_CLAUDE_DOOR_CONFIRM_S", &c.DoorConfirm, true)
	secs("OO_CLAUDE_WAIT_S", &c.Wait, true)
	secs("OO_CLAUDE_MIN_INTERVAL_S", &c.MinInterval, true)
	str("OO_CLAUDE_RESUME_MODEL", &c.ResumeModel)
	secs("OO_CLAUDE_RESUME_TIMEOUT_S", &c.ResumeTimeout, false)
	str("OO_CLAUDE_START_MODEL", &c.StartModel)
	secs("OO_CLAUDE_START_TIMEOUT_S", &c.StartTimeout, false)
	secs("OO_CLAUDE_RIDING_WINDOW_S", &c.RidingWindow, false)
	flag("OO_CLAUDE_DOCTOR_MCP", &c.DoctorMCP)
	c.Station = getenv("OO_CLAUDE_STATION")
	if v := strings.Fields(getenv("OO_CLAUDE_SSH")); len(v) > 0 {
		c.SSH = v
	}
	c.RemoteBin = getenv("OO_CLAUDE_REMOTE_BIN")
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	return c, nil
}

// unset is the getenv of an environment with nothing set.
func unset(string) string { return "" }
