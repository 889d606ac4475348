package station

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// Proc reads process facts from a procfs root. The zero value reads /proc.
type Proc struct {
	// Root is the procfs mount point; "" means "/proc". Tests point it at a
	// directory they fill.
	Root string
}

func (p Proc) root() string {
	if p.Root == "" {
		return "/proc"
	}
	return p.Root
}

// errNoProcess reports a pid that does not run (or has no readable stat).
var errNoProcess = errors.New("no such process")

// ProcInfo is what /proc/<pid>/stat says about a process.
type ProcInfo struct {
	PID   int
	PPID  int
	PGRP  int    // the process group
	Comm  string // the executable's short name, as the kernel keeps it (≤ 15 bytes)
	State byte   // R, S, D, Z, T, ...
	// StartTicks is field 22 of stat, the start time in clock ticks since
	// boot, as a decimal string: Claude Code's procStart.
	StartTicks string
}

// Zombie reports whether the process has exited and waits to be reaped.
func (i ProcInfo) Zombie() bool { return i.State == 'Z' || i.State == 'X' }

// Info parses /proc/<pid>/stat.
func (p Proc) Info(pid int) (ProcInfo, error) {
	if pid <= 0 {
		return ProcInfo{}, fmt.Errorf("pid %d: %w", pid, errNoProcess)
	}
	path := filepath.Join(p.root(), strconv.Itoa(pid), "stat")
	b, err := readProcFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errESRCH) {
			return ProcInfo{}, fmt.Errorf("pid %d: %w", pid, errNoProcess)
		}
		return ProcInfo{}, err
	}
	info, err := parseStat(b)
	if err != nil {
		return ProcInfo{}, &fs.PathError{Op: "parse", Path: path, Err: err}
	}
	return info, nil
}

// errBadStat reports a stat line that cannot be parsed.
var errBadStat = errors.New("malformed /proc stat line")

// parseStat parses the content of a /proc/<pid>/stat file. The comm field may
// hold spaces and parentheses; it ends at the last ')'.
func parseStat(b []byte) (ProcInfo, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open <= 0 || end < open {
		return ProcInfo{}, errBadStat
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil || pid <= 0 {
		return ProcInfo{}, errBadStat
	}
	rest := strings.Fields(string(b[end+1:]))
	// rest[0] is field 3 (state); field n is rest[n-3].
	if len(rest) < 20 || len(rest[0]) != 1 {
		return ProcInfo{}, errBadStat
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil || ppid < 0 {
		return ProcInfo{}, errBadStat
	}
	pgrp, err := strconv.Atoi(rest[2])
	if err != nil || pgrp < 0 {
		return ProcInfo{}, errBadStat
	}
	start := rest[22-3]
	if _, err := strconv.ParseUint(start, 10, 64); err != nil {
		return ProcInfo{}, errBadStat
	}
	return ProcInfo{PID: pid, PPID: ppid, PGRP: pgrp, Comm: string(b[open+1 : end]), State: rest[0][0], StartTicks: start}, nil
}

// Exe returns the target of /proc/<pid>/exe.
func (p Proc) Exe(pid int) (string, error) {
	return os.Readlink(filepath.Join(p.root(), strconv.Itoa(pid), "exe"))
}

// ExeInfo stats the executable the process runs, through /proc/<pid>/exe
// (so also a file that was deleted or replaced since the process started):
// compare it with [os.SameFile] to tell which program a process is.
func (p Proc) ExeInfo(pid int) (fs.FileInfo, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("pid %d: %w", pid, errNoProcess)
	}
	return os.Stat(filepath.Join(p.root(), strconv.Itoa(pid), "exe"))
}

// Cmdline returns the process's argument vector.
func (p Proc) Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(p.root(), strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(string(b), "\x00"), nil
}

// Alive reports whether pid runs and, when procStart is not empty, started at
// procStart ticks. A zombie is not alive. A process whose stat cannot be
// read for want of resources (no file descriptor or memory left for the
// reader: EMFILE, ENFILE, ENOMEM) counts as alive: the read says nothing
// of it, and a session is never called ended, nor its files collected,
// because a read failed.
func (p Proc) Alive(pid int, procStart string) bool {
	info, err := p.Info(pid)
	if err != nil {
		return outOfResources(err)
	}
	if info.Zombie() {
		return false
	}
	return procStart == "" || info.StartTicks == procStart
}

// outOfResources reports an error that is the reader's, not the file's:
// no descriptor or memory left, for now.
func outOfResources(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOMEM)
}

// gonePoll is WaitGone's poll where a process's exit is no event.
const gonePoll = 250 * time.Millisecond

// WaitGone blocks until process pid, started at procStart ("" for any
// start), is gone and returns nil: it exited (a zombie has), or its pid now
// names another process. When ctx ends first it returns ctx's error. On
// Linux, reading the real /proc (Root ""), the exit is an event (a pidfd
// in the runtime's poller), so WaitGone returns within milliseconds of the
// exit and costs nothing while it waits. Elsewhere, and for a Proc
// whose Root is a directory a test filled, it checks Alive every 250 ms.
func (p Proc) WaitGone(ctx context.Context, pid int, procStart string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !p.Alive(pid, procStart) {
		return nil
	}
	if p.Root == "" {
		pe, err := fsx.OpenProcExit(pid)
		switch {
		case errors.Is(err, os.ErrProcessDone):
			return nil
		case err == nil:
			defer pe.Close()
			// The pidfd names whatever process had pid when it was
			// opened: check it is still the one meant.
			if !p.Alive(pid, procStart) {
				return nil
			}
			if err := pe.Wait(ctx); err == nil || ctx.Err() != nil {
				return err
			}
			// A pidfd that cannot be waited on: poll instead.
		}
	}
	tick := time.NewTicker(gonePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if !p.Alive(pid, procStart) {
				return nil
			}
		}
	}
}

// maxAncestry bounds every walk up the process tree.
const maxAncestry = 64

// Ancestors returns the parent chain of pid, nearest first, ending at pid 1
// or at the first process that cannot be read. pid itself is not included.
func (p Proc) Ancestors(pid int) ([]ProcInfo, error) {
	info, err := p.Info(pid)
	if err != nil {
		return nil, err
	}
	var out []ProcInfo
	for i := 0; i < maxAncestry && info.PPID > 0; i++ {
		parent, err := p.Info(info.PPID)
		if err != nil {
			break
		}
		out = append(out, parent)
		info = parent
	}
	return out, nil
}

// IsDescendant reports whether pid descends from ancestor (and ancestor still
// started at ancestorStart when that is not empty).
func (p Proc) IsDescendant(pid, ancestor int, ancestorStart string) bool {
	chain, err := p.Ancestors(pid)
	if err != nil {
		return false
	}
	for _, a := range chain {
		if a.PID == ancestor {
			return ancestorStart == "" || a.StartTicks == ancestorStart
		}
	}
	return false
}

// Pids lists the numeric entries of the procfs root.
func (p Proc) Pids() ([]int, error) {
	ents, err := os.ReadDir(p.root())
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}

// Bounds of the reads of another process's tables: a process with more
// threads, children or open files than these is read this far and no
// further (the kernel's lists are read, never held whole).
const (
	maxTasks     = 4096
	maxFDs       = 4096
	maxChildList = 64 << 10 // bytes of one task's children file
)

// Children returns the pids of pid's children, as the kernel lists them
// in /proc/<pid>/task/<tid>/children for each of its threads (at most
// maxTasks threads, 64 KiB of list each). On a kernel without those lists
// (CONFIG_PROC_CHILDREN off), or a procfs root without them, it falls back
// to reading every process's stat for its parent, bounded by the process
// table.
func (p Proc) Children(pid int) ([]int, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("pid %d: %w", pid, errNoProcess)
	}
	if _, err := p.Info(pid); err != nil {
		return nil, err
	}
	taskDir := filepath.Join(p.root(), strconv.Itoa(pid), "task")
	tasks, _ := readDirNames(taskDir, maxTasks) // none: the fallback below
	var out []int
	listed := false
	for _, t := range tasks {
		b, err := readBounded(filepath.Join(taskDir, t, "children"), maxChildList)
		if err != nil {
			continue
		}
		listed = true
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil && n > 0 && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	if listed {
		return out, nil
	}
	pids, err := p.Pids()
	if err != nil {
		return nil, err
	}
	for _, c := range pids {
		if info, err := p.Info(c); err == nil && info.PPID == pid {
			out = append(out, c)
		}
	}
	return out, nil
}

// OpenFiles returns the paths pid's open file descriptors name, as the
// links /proc/<pid>/fd/<n> read (the kernel's path of each file, symlinks
// resolved; a removed file's ends in " (deleted)"; a pipe or socket is
// "pipe:[…]", "socket:[…]"), at most maxFDs of them. Only the process's
// own user (or root) may read them.
func (p Proc) OpenFiles(pid int) ([]string, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("pid %d: %w", pid, errNoProcess)
	}
	dir := filepath.Join(p.root(), strconv.Itoa(pid), "fd")
	fds, err := readDirNames(dir, maxFDs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("pid %d: %w", pid, errNoProcess)
		}
		return nil, err
	}
	out := make([]string, 0, len(fds))
	for _, fd := range fds {
		if t, err := os.Readlink(filepath.Join(dir, fd)); err == nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// readDirNames lists at most max names of dir, unsorted.
func readDirNames(dir string, max int) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(max)
	if err != nil && len(names) == 0 && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return names, nil
}

// readBounded reads at most max bytes of a procfs file.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}
