package fsx

import (
	"errors"

	"golang.org/x/sys/unix"
)

// SigsHold reports whether a [Sig] of a file in d can vouch for its
// content: d is on a local file system that sets a file's change time
// on every write (ext2/3/4, XFS, Btrfs, F2FS, tmpfs, overlayfs, ZFS). On
// a network file system (NFS, SMB, FUSE) a stat may answer from a cache
// that an open would have refreshed, so there it is false, as it is for
// any file system not named here.
func (d *Dir) SigsHold() bool {
	if d.fd < 0 {
		return false
	}
	var sfs unix.Statfs_t
	for {
		err := unix.Fstatfs(d.fd, &sfs)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			return false
		}
	}
	switch uint32(sfs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, uint32(unix.BTRFS_SUPER_MAGIC), unix.F2FS_SUPER_MAGIC,
		unix.TMPFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC, zfsSuperMagic:
		return true
	}
	return false
}

// zfsSuperMagic is OpenZFS's f_type on Linux (x/sys does not name it).
const zfsSuperMagic = 0x2fc12fc1
