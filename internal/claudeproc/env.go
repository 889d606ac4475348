package claudeproc

import (
	"slices"
	"strconv"
	"strings"
)

// KeepEnv returns the 18 CLAUDE* variables a child keeps (the provider and
// auth names the Claude Code binary knows, as COMPATIBILITY.md lists them
// under "Knobs"): CLAUDE_CONFIG_DIR, the provider switches, and the four
// credentials. Every other variable whose
// name starts with CLAUDE is dropped from a child's environment.
func KeepEnv() []string {
	return []string{
		"CLAUDE_CONFIG_DIR",
		"CLAUDE_CODE_USE_BEDROCK",
		"CLAUDE_CODE_USE_VERTEX",
		"CLAUDE_CODE_USE_FOUNDRY",
		"CLAUDE_CODE_USE_ANTHROPIC_AWS",
		"CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD",
		"CLAUDE_CODE_USE_MANTLE",
		"CLAUDE_CODE_USE_GATEWAY",
		"CLAUDE_CODE_SKIP_BEDROCK_AUTH",
		"CLAUDE_CODE_SKIP_VERTEX_AUTH",
		"CLAUDE_CODE_SKIP_FOUNDRY_AUTH",
		"CLAUDE_CODE_SKIP_ANTHROPIC_AWS_AUTH",
		"CLAUDE_CODE_SKIP_ANTHROPIC_GOOGLE_CLOUD_AUTH",
		"CLAUDE_CODE_SKIP_MANTLE_AUTH",
		"CLAUDE_CODE_OAUTH_TOKEN",
		"CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
		"CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
		"CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR",
	}
}

// CredentialEnv returns the four credential names of [KeepEnv]: a detached
// unit never gets them (a token would sit in the unit's environment, and our
// descriptors do not exist in a unit).
func CredentialEnv() []string {
	return []string{
		"CLAUDE_CODE_OAUTH_TOKEN",
		"CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
		"CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
		"CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR",
	}
}

// descriptorEnv are the keep-list names whose value is a file descriptor
// the child must inherit.
func descriptorEnv() []string {
	return []string{"CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR", "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR"}
}

// UnitEnvNames returns the fixed list of plain variables start --systemd
// passes to its unit by name (systemd-run -E NAME takes the value from the
// invoking environment): the login basics, every OO_CLAUDE_* knob, and the
// CLAUDE* keep-list without its credentials. Never a token, never a
// provider companion (ANTHROPIC_*, AWS_*, CLOUD_ML_*), never the caller's
// door or identity.
func UnitEnvNames() []string {
	names := []string{
		"HOME", "USER", "LOGNAME", "PATH", "LANG", "LC_ALL", "TMPDIR", "XDG_RUNTIME_DIR",
		"OO_CLAUDE_INBOX_DIR", "OO_CLAUDE_STATE_DIR", "OO_CLAUDE_OBSERVATORY_DIR",
		"OO_CLAUDE_SESSIONS_DIR", "OO_CLAUDE_PROJECTS_DIR", "OO_CLAUDE_BIN", "OO_CLAUDE_SYSTEMD_RUN",
		"OO_CLAUDE_DOORMAN", "OO_CLAUDE_DOORMAN_POLL_S", "OO_CLAUDE_DOORMAN_HEARTBEAT_S",
		"OO_CLAUDE_DOOR_SETTLE_S", "OO_CLAUDE_DOORMAN_PYTHON", "OO_CLAUDE_WAIT_S", "OO_CLAUDE_MIN_INTERVAL_S",
		"OO_CLAUDE_RESUME_MODEL", "OO_CLAUDE_RESUME_TIMEOUT_S", "OO_CLAUDE_START_MODEL", "OO_CLAUDE_START_TIMEOUT_S",
		"OO_CLAUDE_RIDING_WINDOW_S", "OO_CLAUDE_DOCTOR_MCP",
	}
	for _, n := range KeepEnv() {
		if !slices.Contains(CredentialEnv(), n) {
			names = append(names, n)
		}
	}
	return names
}

// PassedFD is a descriptor the child inherits: the variable that named it,
// the descriptor in this process, and the number it gets in the child.
type PassedFD struct {
	Name    string
	FD      int // in this process
	ChildFD int // in the child (3, 4)
}

// ScrubEnv returns environ without every CLAUDE* variable that is not in
// [KeepEnv] (later duplicates of a name win, as getenv does). A descriptor
// variable keeps its place but gets the child's number: the first becomes 3,
// the second 4, in the order of environ; a value that is not a descriptor
// number is dropped. The descriptors to pass are returned in child order.
func ScrubEnv(environ []string) (env []string, fds []PassedFD) {
	keep := KeepEnv()
	last := map[string]int{}
	for i, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		last[name] = i
	}
	for i, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" || last[name] != i {
			continue
		}
		if strings.HasPrefix(name, "CLAUDE") && !slices.Contains(keep, name) {
			continue
		}
		if slices.Contains(descriptorEnv(), name) {
			fd, err := strconv.Atoi(strings.TrimSpace(val))
			if err != nil || fd < 0 {
				continue
			}
			child := 3 + len(fds)
			fds = append(fds, PassedFD{Name: name, FD: fd, ChildFD: child})
			env = append(env, name+"="+strconv.Itoa(child))
			continue
		}
		env = append(env, kv)
	}
	return env, fds
}

// UnitEnv returns the -E arguments for the names of [UnitEnvNames] that
// are set in environ, and the environment systemd-run itself runs with:
// those variables plus the session bus address it needs.
func UnitEnv(environ []string) (flags []string, runEnv []string) {
	vals := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vals[k] = v
		}
	}
	for _, n := range UnitEnvNames() {
		if v, ok := vals[n]; ok {
			flags = append(flags, "-E", n)
			runEnv = append(runEnv, n+"="+v)
		}
	}
	if v, ok := vals["DBUS_SESSION_BUS_ADDRESS"]; ok {
		runEnv = append(runEnv, "DBUS_SESSION_BUS_ADDRESS="+v)
	}
	return flags, runEnv
}
