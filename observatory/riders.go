package observatory

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
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
		var mtime time.Time
		var sig fsx.Sig // the stat's, when the cache may hold the rider
		if !b.all || b.cache != nil {
			var err error
			if mtime, sig, err = fsx.EntryStat(f.Transcript, b.uid); err != nil {
				return // gone since the listing
			}
			if !b.all && b.now.Sub(mtime) >= b.window {
				total++ // quiet/finished whatever its last message says
				return
			}
		}
		// The transcript's reading kept in the cache under the Sig of
		// the stat just made, judged now; else opened from the listing
		// (its type is the check before the open).
		var r transcript.Rider
		path := f.Path()
		kept, i, hit := b.cache.lookup(path, sig)
		if hit {
			r = kept.rider(path).Judged(mtime, b.now, b.window)
		} else {
			var err error
			if r, err = transcript.ReadRiderEntry(f.Dir, f.Transcript, b.now, b.window); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					warns = append(warns, err.Error())
				}
				return
			}
		}
		total++
		if r.State == transcript.Riding {
			riding++
		}
		// The meta file read only for a rider the document shows, and
		// only when the listing holds one; taken from the cache when its
		// Sig is the kept one's (also when the transcript changed since).
		var m transcriptfile.RiderMeta
		var msig fsx.Sig
		metaRead := false
		if i >= 0 {
			m = transcriptfile.RiderMeta{AgentType: kept.agentType, Description: kept.description, Model: kept.model}
			msig = kept.metaSig
		}
		listed := b.all || r.State == transcript.Riding
		switch {
		case !listed:
		case f.Meta == nil:
			m, msig = transcriptfile.RiderMeta{}, fsx.Sig{}
		default:
			var now fsx.Sig
			if b.cache != nil {
				_, now, _ = fsx.EntryStat(f.Meta, b.uid)
			}
			if now == (fsx.Sig{}) || now != msig {
				metaRead = true
				var err error
				if m, err = transcriptfile.ReadRiderMetaEntry(f.Dir, f.Meta); err != nil {
					m, now = transcriptfile.RiderMeta{}, fsx.Sig{}
				}
				msig = now
			}
			r.AgentType, r.Description, r.Model = m.AgentType, m.Description, m.Model
		}
		b.cache.keep(&r, sig, i, !hit, m, msig, metaRead)
		if listed {
			list = append(list, r)
		}
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
