package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ExitSSH is the exit code with which ssh reports its own failure.
const ExitSSH = 255

// ErrSSH is matched by every [SSHError].
var ErrSSH = errors.New("ssh failed")

// SSHError is ssh's own failure to reach a station (exit 255, or ssh
// could not be started): the remote verb did not run, or its connection
// dropped; nothing is known of its verdict.
type SSHError struct {
	Dest   string
	Stderr string // ssh's last words (bounded)
	Err    error
}

func (e *SSHError) Error() string {
	msg := fmt.Sprintf("ssh %s: %v", e.Dest, e.Err)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// Unwrap returns ErrSSH and the cause.
func (e *SSHError) Unwrap() []error { return []error{ErrSSH, e.Err} }

// Host is one station reached over ssh. The zero value of every field but
// Dest has a default.
type Host struct {
	// Dest is the ssh destination: [user@]host, ssh://[user@]host[:port]
	// or a Host alias of ~/.ssh/config.
	Dest string
	// SSH is the ssh client's command line (OO_CLAUDE_SSH); nil is "ssh".
	SSH []string
	// RemoteBin is the oo-claude command on the station
	// (OO_CLAUDE_REMOTE_BIN); "" is oo-claude from the remote PATH, else
	// ~/go/bin/oo-claude (the README's install, not on a non-interactive
	// ssh PATH).
	RemoteBin string
	// ControlPath, when set, shares one connection per destination among
	// the calls that use it at the same time (ssh's ControlMaster=auto,
	// no ControlPersist: the first call's ssh is the master, stays in the
	// foreground until its own session and every call sharing it end, and
	// dies with this process as every ssh child does, SIGKILL included; a
	// persisting master would be a background process that outlives it).
	// [Host.Close] ends a master still running.
	ControlPath string
}

// NewHosts returns a Host for each of dests, reached with the ssh command
// line ssh and the remote binary remoteBin, sharing one connection per
// destination (ControlPath in a fresh private directory) within the
// caller's run. An ssh command line that shares connections itself (an
// option naming Control…, as -o ControlPath=…) keeps its own: the hosts
// neither override nor end that master. done closes every host and
// removes the directory; call it once the hosts are no longer used.
//
// The directory is in TMPDIR when a control socket's path there fits a
// unix socket's bound, else in /tmp; when neither can hold one, the hosts
// share no connection (each call its own) rather than fail every call.
func NewHosts(dests, ssh []string, remoteBin string) (hosts []Host, done func(), err error) {
	dir, err := controlDir()
	if err != nil {
		return nil, nil, fmt.Errorf("ssh control directory: %w", err)
	}
	own := ""
	if dir != "" {
		own = filepath.Join(dir, "%C")
	}
	for _, a := range ssh {
		if strings.Contains(strings.ToLower(a), "control") {
			own = ""
		}
	}
	for _, d := range dests {
		hosts = append(hosts, Host{Dest: d, SSH: ssh, RemoteBin: remoteBin, ControlPath: own})
	}
	return hosts, func() {
		for _, h := range hosts {
			h.Close()
		}
		if dir != "" {
			os.RemoveAll(dir)
		}
	}, nil
}

// maxSocketPath is the longest path a unix socket can be bound at on
// every system ssh runs on: sun_path holds 104 bytes on macOS and the
// BSDs (108 on Linux), its terminating NUL included.
const maxSocketPath = 103

// controlSocketLen is the length of the longest path ssh binds for a
// control path of dir/%C: %C is 40 hex digits (a SHA-1), and a master
// binds its socket first at that path plus "." and 16 random characters,
// then renames it into place. A longer path fails every call ("path too
// long for Unix domain socket", exit 255).
func controlSocketLen(dir string) int { return len(dir) + len("/") + 40 + len(".") + 16 }

// controlDir makes a fresh private directory (mkdir 0700: never one that
// was there, a planted symlink included) for the control sockets of a
// run: in TMPDIR when its sockets' paths fit, else in /tmp (a long TMPDIR,
// as a per-user or per-job one can be). "" and no error is neither
// fitting: the caller shares no connection. An error is TMPDIR's own,
// when its paths fit.
func controlDir() (string, error) {
	const prefix = "oo-claude-ssh-"
	// The name os.MkdirTemp makes is prefix and at most 10 digits.
	if tmp := os.TempDir(); controlSocketLen(filepath.Join(tmp, prefix+"4294967295")) <= maxSocketPath {
		return os.MkdirTemp(tmp, prefix)
	}
	// /tmp is sticky: no one else can rename or replace a directory of
	// ours in it.
	dir, err := os.MkdirTemp("/tmp", prefix)
	if err != nil {
		return "", nil
	}
	return dir, nil
}

// Name is the station's name in merged views: its destination.
func (h Host) Name() string { return h.Dest }

// sshArgs is ssh's command line for remote args.
func (h Host) sshArgs(ctx context.Context, args []string) (string, []string) {
	ssh := h.SSH
	if len(ssh) == 0 {
		ssh = []string{"ssh"}
	}
	argv := append([]string(nil), ssh[1:]...)
	// No tty: the JSON keeps its LF line ends and stderr stays apart.
	argv = append(argv, "-T", "-o", "BatchMode=yes")
	argv = append(argv, h.liveness(ctx, ssh)...)
	if h.ControlPath != "" {
		argv = append(argv, "-o", "ControlMaster=auto", "-o", "ControlPath="+h.ControlPath, "-o", "ControlPersist=no")
	}
	argv = append(argv, "--", h.Dest, remoteCommand(h.RemoteBin, args))
	return ssh[0], argv
}

// connectTimeout bounds reaching a station (see liveness); a variable, so
// an internal test can shorten it.
var connectTimeout = 10 * time.Second

// aliveInterval, with ssh's ServerAliveCountMax (3 unless set), is how
// long a connection whose station stopped answering lasts: 15 s.
const aliveInterval = 5 * time.Second

// livenessCache holds liveness's options by ssh command line and
// destination: their config is read once per process.
var livenessCache sync.Map

// liveness is the ssh options that bound a station that never answers
// (ConnectTimeout: the TCP connection and ssh's banner; without it, a
// host that accepts the connection and never speaks holds a call for
// good) and one that stops answering (ServerAliveInterval: ssh exits 255
// after ServerAliveCountMax probes sshd did not answer; the remote verb's
// own silence, a long --reply wait, is no such thing). ssh takes an
// option's first value, and -o comes before the config files, so each is
// left out when the configuration in effect for h.Dest (`ssh -G`: the
// user's command line ssh, then their ~/.ssh/config and the system's)
// sets it already.
func (h Host) liveness(ctx context.Context, ssh []string) []string {
	key := strings.Join(append(append([]string(nil), ssh...), h.Dest), "\x00")
	if v, ok := livenessCache.Load(key); ok {
		return v.([]string)
	}
	argv := append(append([]string(nil), ssh[1:]...), "-G", "--", h.Dest)
	cmd := exec.CommandContext(ctx, ssh[0], argv...)
	cmd.SysProcAttr = dieWithParent()
	var out boundedBuffer
	out.max = 256 << 10
	cmd.Stdout = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil // the call ends with ctx anyway; nothing to keep
	}
	set := map[string]bool{}
	if err == nil { // an ssh without -G (before 6.8) sets nothing we know of
		for _, l := range strings.Split(out.b.String(), "\n") {
			k, v, _ := strings.Cut(strings.TrimSpace(l), " ")
			// ssh's defaults: no connect timeout, no keepalive.
			set[k] = !(k == "connecttimeout" && v == "none" || k == "serveraliveinterval" && v == "0")
		}
	}
	var opts []string
	if !set["connecttimeout"] {
		opts = append(opts, "-o", fmt.Sprintf("ConnectTimeout=%d", max(1, int(connectTimeout.Seconds()))))
	}
	if !set["serveraliveinterval"] {
		opts = append(opts, "-o", fmt.Sprintf("ServerAliveInterval=%d", int(aliveInterval.Seconds())))
	}
	livenessCache.Store(key, opts)
	return opts
}

// remoteCommand is the one string ssh hands the remote shell: sh runs the
// oo-claude binary with args, each single-quoted, so nothing of them is
// expanded, split or run.
func remoteCommand(bin string, args []string) string {
	var b strings.Builder
	if bin == "" {
		b.WriteString(`b=$(command -v oo-claude) || b=$HOME/go/bin/oo-claude; exec "$b"`)
	} else {
		b.WriteString("exec " + shellQuote(bin))
	}
	for _, a := range args {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String()
}

// shellQuote is s as one word of sh: single quotes, a quote as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// maxOutput bounds what a call keeps of a remote verb's stdout.
const maxOutput = 64 << 20

// Result is what one remote verb printed and its exit code.
type Result struct {
	Stdout []byte
	Stderr []byte
	Exit   int
}

// Run runs the oo-claude verb args on the station with stdin (nil is
// empty) and returns what it printed and its exit code. An exit of 255
// or an ssh that cannot start is an *SSHError; any other exit is the
// remote verb's and no error. When ctx ends, ssh is killed and the
// *SSHError matches ctx.Err().
func (h Host) Run(ctx context.Context, args []string, stdin io.Reader) (Result, error) {
	if h.Dest == "" || strings.HasPrefix(h.Dest, "-") {
		return Result{}, &SSHError{Dest: h.Dest, Err: errors.New("no usable destination")}
	}
	name, argv := h.sshArgs(ctx, args)
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.SysProcAttr = dieWithParent()
	cmd.Stdin = stdin
	var out, errb boundedBuffer
	out.max, errb.max = maxOutput, 64<<10
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := Result{Stdout: out.b.Bytes(), Stderr: errb.b.Bytes()}
	res.Exit, err = h.sshEnd(ctx, err, res.Stderr)
	return res, err
}

// sshEnd reads how the ssh of a call ended (err, cmd.Run's or Wait's):
// the remote verb's exit code, or an *SSHError for ssh's own failure
// (exit 255), an ssh that could not start or was killed. When ctx has
// ended, that error matches ctx.Err(): ctx's end killed ssh, or (a
// terminal's SIGINT reaches ssh's process group too) ssh exited 255 of
// the same signal, so the caller learns the call was cancelled, not that
// the station was unreachable.
func (h Host) sshEnd(ctx context.Context, err error, stderr []byte) (int, error) {
	var ee *exec.ExitError
	exited := errors.As(err, &ee) && ee.ExitCode() >= 0
	switch {
	case err == nil:
		return 0, nil
	case exited && ee.ExitCode() != ExitSSH:
		return ee.ExitCode(), nil
	case ctx.Err() != nil:
		return 0, &SSHError{Dest: h.Dest, Stderr: lastLines(stderr), Err: ctx.Err()}
	case exited:
		return 0, &SSHError{Dest: h.Dest, Stderr: lastLines(stderr), Err: fmt.Errorf("exit %d", ExitSSH)}
	}
	return 0, &SSHError{Dest: h.Dest, Stderr: lastLines(stderr), Err: err}
}

// Close ends the shared connection of a Host with a ControlPath (ssh -O
// exit); it is a no-op without one.
func (h Host) Close() error {
	if h.ControlPath == "" {
		return nil
	}
	ssh := h.SSH
	if len(ssh) == 0 {
		ssh = []string{"ssh"}
	}
	argv := append(append([]string(nil), ssh[1:]...), "-o", "ControlPath="+h.ControlPath, "-O", "exit", "--", h.Dest)
	cmd := exec.Command(ssh[0], argv...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.Run() // no master is not an error
	return nil
}

type boundedBuffer struct {
	b   bytes.Buffer
	max int
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// lastLines is the end of ssh's stderr, for a message.
func lastLines(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return s
}
