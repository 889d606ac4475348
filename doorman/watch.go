package doorman

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/station"
)

// watchRegistry arms the file events of the owner's registry files (its
// row, "<owner pid>.json", and its key file): each marks the identity as
// possibly changed. The two files are watched themselves, not the
// registry directory, so the other sessions' rows changing wake nothing.
// It reports whether it could (else the identity is re-checked on a
// timer).
func (fl *follower) watchRegistry() bool {
	row, key := fl.ownerFiles()
	w := fsx.NewFileWaker(time.Hour, row, key)
	if w.Polling() {
		w.Close()
		return false
	}
	fl.regWaker, fl.regWake = w, w.C
	return true
}

// poke wakes the follow loop (at most one wake-up waits).
func (fl *follower) poke() {
	select {
	case fl.pokes <- struct{}{}:
	default:
	}
}

// watchOwner makes the exits of the owner and of every process between it
// and this one events (pidfds), each marking the identity as possibly
// changed (a process of the chain gone ends the descent). It reports
// whether it could: only on the real /proc (a Host whose Proc reads
// another root names no real processes) and with pidfds.
func (fl *follower) watchOwner() bool {
	h := fl.d.o.Host
	if h.Proc.Root != "" || fl.id.OwnerPID <= 0 {
		return false
	}
	chain, err := h.Proc.Ancestors(h.PID)
	if err != nil {
		return false
	}
	for _, a := range chain {
		p, err := fsx.OpenProcExit(a.PID)
		if err != nil {
			return false // fl.close closes those opened
		}
		fl.exits = append(fl.exits, p)
		if a.PID == fl.id.OwnerPID {
			break
		}
	}
	if len(fl.exits) == 0 || chain[len(fl.exits)-1].PID != fl.id.OwnerPID {
		return false
	}
	// A pid recycled between the walk and the open would name another
	// process: the chain read again after the opens must be the same.
	again, err := h.Proc.Ancestors(h.PID)
	if err != nil || len(again) < len(fl.exits) {
		return false
	}
	for i := range fl.exits {
		if again[i].PID != chain[i].PID || again[i].StartTicks != chain[i].StartTicks {
			return false
		}
	}
	for _, p := range fl.exits {
		fl.wg.Add(1)
		go func() {
			defer fl.wg.Done()
			if p.Wait(context.Background()) == nil {
				fl.idDirty.Store(true)
				fl.poke()
			}
		}()
	}
	return true
}

// ownerLook is the owner's registry files at one look: its row and its
// key file (the token).
type ownerLook struct {
	row, key fileStamp
}

// fileStamp tells one version of a file from another: a replace changes
// the inode, a write the size or the modification time.
type fileStamp struct {
	ok   bool
	ino  uint64
	size int64
	mod  int64
}

func stampOf(path string) fileStamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStamp{}
	}
	return stampInfo(fi)
}

func stampInfo(fi fs.FileInfo) fileStamp {
	return fileStamp{ok: true, ino: fsx.Inode(fi), size: fi.Size(), mod: fi.ModTime().UnixNano()}
}

// ownerFiles are the paths of the owner's registry row and key file,
// worked out once a follower: its owner and socket never change (a change
// ends the follower, errSwitch).
func (fl *follower) ownerFiles() (row, key string) {
	if fl.rowPath == "" {
		st := fl.d.o.Host.Station
		r := station.Row{PID: fl.id.OwnerPID, MessagingSocketPath: fl.id.Socket}
		fl.rowPath, fl.keyPath = filepath.Join(st.Paths.SessionsDir, strconv.Itoa(fl.id.OwnerPID)+".json"), st.KeyFile(r)
	}
	return fl.rowPath, fl.keyPath
}

// lookAtOwner looks at the owner's registry files (two lstats).
func (fl *follower) lookAtOwner() ownerLook {
	row, key := fl.ownerFiles()
	return ownerLook{row: stampOf(row), key: stampOf(key)}
}

// recheckIdentity works the identity out again when it may have changed:
// always without identity events; with them, when an event came (the
// owner's registry files changed, a process of the chain exited) or its
// registry files are not the ones of the last identify (a change whose
// event is still on its way). Otherwise the identity stands: the socket's
// listener is still checked on every dial (door.Dialer's ExpectPID).
// errSwitch: the identity no longer allows serving this inbox for this
// owner; errStop: ctx ended.
func (fl *follower) recheckIdentity(ctx context.Context) error {
	var look ownerLook
	if fl.idEvents {
		look = fl.lookAtOwner()
		if !fl.idDirty.Load() && look == fl.idLook {
			return nil
		}
		fl.idDirty.Store(false)
	}
	id := fl.d.o.Host.identify(ctx, fl.d.o.Mode, fl.d.o.Session, fl.id)
	if ctx.Err() != nil {
		return errStop
	}
	isNew := changed(fl.id, id)
	fl.id, fl.idLook = id, look
	if isNew {
		return errSwitch
	}
	return nil
}
