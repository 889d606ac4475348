package observatory

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oo-family/oo-claude/transcript"
)

// riderDirDepth is how many directory levels under subagents/ hold rider
// transcripts: subagents/agent-*.jsonl and
// subagents/workflows/<run>/agent-*.jsonl (transcript.Riders' rule).
const riderDirDepth = 2

// riders returns the riders of the session directory dir: every one when
// finished riders are listed, else the riding ones, with the riding and
// total counts. It walks like transcript.Riders, but a rider whose
// transcript did not change within the window cannot be riding (the riding
// rule), so unless finished riders are listed it is only counted, never
// opened: on a station where most riders finished long ago, the cost
// follows the riders that may ride.
func (b *builder) riders(dir string) (list []transcript.Rider, riding, total int, warns []string) {
	list = []transcript.Rider{}
	root := filepath.Join(dir, transcript.SubagentsDir)
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			if p != root {
				warns = append(warns, err.Error())
				return nil
			}
			return err
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(root, p); rel != "." && strings.Count(rel, string(filepath.Separator)) >= riderDirDepth {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !d.Type().IsRegular() || !strings.HasPrefix(name, "agent-") || !strings.HasSuffix(name, transcript.Ext) ||
			len(name) <= len("agent-")+len(transcript.Ext) {
			return nil
		}
		if !b.all {
			fi, err := d.Info()
			if err != nil {
				return nil // gone since the listing
			}
			if b.now.Sub(fi.ModTime()) >= b.window {
				total++ // quiet/finished whatever its last message says
				return nil
			}
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		warns = append(warns, (&transcript.Error{Op: "riders", Path: root, Err: err}).Error())
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
