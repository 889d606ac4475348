package observatory

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
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
	// Each rider is read while the walk holds its directory open: stat'ed
	// and opened relative to it.
	err := riderwalk.WalkRiders(dir, func(f riderwalk.Rider) {
		if !b.all {
			fi, err := f.Transcript.Info()
			if err != nil {
				return // gone since the listing
			}
			if b.now.Sub(fi.ModTime()) >= b.window {
				total++ // quiet/finished whatever its last message says
				return
			}
		}
		// Opened from the listing (its type is the check before the
		// open); the meta file read only for a rider the document shows,
		// and only when the listing holds one.
		r, err := transcript.ReadRiderEntry(f.Dir, f.Transcript, b.now, b.window)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				warns = append(warns, err.Error())
			}
			return
		}
		total++
		if r.State == transcript.Riding {
			riding++
		}
		if !b.all && r.State != transcript.Riding {
			return
		}
		if f.Meta != nil {
			if m, err := transcriptfile.ReadRiderMetaEntry(f.Dir, f.Meta); err == nil {
				r.AgentType, r.Description, r.Model = m.AgentType, m.Description, m.Model
			}
		}
		list = append(list, r)
	}, func(err error) { warns = append(warns, err.Error()) })
	if err != nil {
		warns = append(warns, (&fs.PathError{Op: "transcript riders", Path: filepath.Join(dir, riderwalk.Dir), Err: err}).Error())
		return []transcript.Rider{}, 0, 0, warns
	}
	sort.SliceStable(list, func(i, j int) bool {
		if !list[i].Started.Equal(list[j].Started) {
			return list[i].Started.Before(list[j].Started)
		}
		return list[i].Path < list[j].Path
	})
	return list, riding, total, warns
}
