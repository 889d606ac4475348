// Package hostile plants the files an adversary would put where oo-claude
// reads or writes: FIFOs, directories, device nodes, sockets, symlinks and
// files another user owns or can write. Tests use it; nothing else does.
package hostile

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"golang.org/x/sys/unix"
)

// Kind is one hostile file type.
type Kind string

// The kinds Plant knows.
const (
	FIFO          Kind = "fifo"
	Dir           Kind = "dir"
	CharDev       Kind = "chardev"
	Socket        Kind = "socket"
	Symlink       Kind = "symlink"        // to a decoy file outside the station
	Foreign       Kind = "foreign"        // a regular file owned by uid 65534 (nobody)
	WorldWritable Kind = "world-writable" // a regular file of the user, mode 0666
)

// Kinds returns every Kind, in a fixed order.
func Kinds() []Kind { return []Kind{FIFO, Dir, CharDev, Socket, Symlink, Foreign, WorldWritable} }

// ForeignUID is the uid Foreign files belong to.
const ForeignUID = 65534

// ErrNeedRoot is returned for kinds that need root (CharDev, Foreign) when the
// caller is not root; tests skip those cells.
var ErrNeedRoot = errors.New("hostile: needs root")

// Plant puts a file of kind k at path (its directory must exist), with content
// for the regular kinds. decoy is the target of a Symlink (created with
// content "decoy\n" if absent), so a test can check that nothing was written
// through it.
func Plant(path string, k Kind, content []byte, decoy string) error {
	switch k {
	case FIFO:
		return unix.Mkfifo(path, 0o600)
	case Dir:
		return os.Mkdir(path, 0o700)
	case CharDev:
		if os.Geteuid() != 0 {
			return ErrNeedRoot
		}
		return unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) // /dev/null's numbers
	case Socket:
		return plantSocket(path)
	case Symlink:
		if _, err := os.Lstat(decoy); err != nil {
			if err := os.WriteFile(decoy, []byte("decoy\n"), 0o600); err != nil {
				return err
			}
		}
		return os.Symlink(decoy, path)
	case Foreign:
		if os.Geteuid() != 0 {
			return ErrNeedRoot
		}
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return err
		}
		return os.Lchown(path, ForeignUID, ForeignUID)
	case WorldWritable:
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return err
		}
		return os.Chmod(path, 0o666)
	}
	return fmt.Errorf("hostile: unknown kind %q", k)
}

// plantSocket binds a unix socket in a short temporary directory (socket
// paths are limited to 108 bytes) and moves the socket file to path.
func plantSocket(path string) error {
	dir, err := os.MkdirTemp("", "hs")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: tmp}); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// TB is what HoldLock needs of a test.
type TB interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
	Cleanup(func())
}

// HoldLock has flock(1) hold the flock of path (created 0600, with its
// directory, when absent), as a stopped process or another program would,
// until the test ends, and returns the holder's pid once the lock is
// taken. Without flock(1) the test is skipped.
func HoldLock(t TB, path string) int {
	t.Helper()
	bin, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("no flock(1):", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, path, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(60 * time.Second); fsx.Holder(path) != cmd.Process.Pid; {
		if time.Now().After(deadline) {
			t.Fatal(fmt.Sprintf("hostile: flock(1) did not take %s", path))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd.Process.Pid
}
