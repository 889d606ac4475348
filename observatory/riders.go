package observatory

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/transcript"
)

// riders returns the riders of the session directory dir: every one when
// finished riders are listed, else the riding ones, with the riding and
// total counts. It walks as transcript.Riders does (riderwalk), but a
// rider whose transcript did not change within the window cannot be riding
// (the riding rule), so unless finished riders are listed it is only
// counted, never opened: on a station where most riders finished long ago, the cost
// follows the riders that may ride.
func (b *builder) riders(dir string) (list []transcript.Rider, riding, total int, warns []string) {
	list = []transcript.Rider{}
	var paths []string
	err := riderwalk.Walk(dir, func(p string, d fs.DirEntry) {
		if !b.all {
			fi, err := d.Info()
			if err != nil {
				return // gone since the listing
			}
			if b.now.Sub(fi.ModTime()) >= b.window {
				total++ // quiet/finished whatever its last message says
				return
			}
		}
		paths = append(paths, p)
	}, func(err error) { warns = append(warns, err.Error()) })
	if err != nil {
		warns = append(warns, (&fs.PathError{Op: "transcript riders", Path: filepath.Join(dir, riderwalk.Dir), Err: err}).Error())
		return list, 0, 0, warns
	}
	for _, p := range paths {
		r, err := transcript.ReadRider(p, b.now, b.window)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				warns = append(warns, err.Error())
			}
			continue
		}
		total++
		if r.State == transcript.Riding {
			riding++
		}
		if b.all || r.State == transcript.Riding {
			list = append(list, r)
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if !list[i].Started.Equal(list[j].Started) {
			return list[i].Started.Before(list[j].Started)
		}
		return list[i].Path < list[j].Path
	})
	return list, riding, total, warns
}
