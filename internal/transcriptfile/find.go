package transcriptfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Candidates is where the transcript of one session may be: what [Find]
// saw. Found lists the regular files named <session id>.jsonl; Hostile is
// the first candidate path that exists and is not a regular file (a
// symlink, FIFO, socket, device or directory), "" when there is none.
type Candidates struct {
	Found   []string
	Hostile string
}

// Any reports whether anything sits at a candidate path: a transcript, or
// a file where one should be.
func (c Candidates) Any() bool { return len(c.Found) > 0 || c.Hostile != "" }

// Find looks for the transcript of session sid under projectsDir (Claude
// Code's <config dir>/projects): with a cwd, <projectsDir>/<encoded
// cwd>/<sid>.jsonl first (a regular file there is the answer, nothing else
// is read); otherwise, or when it is not there, <sid>.jsonl in every
// project directory. The work is one directory listing of projectsDir and
// one lstat per project directory; no file is opened. The error is
// ReadDir's (fs.ErrNotExist when projectsDir does not exist). The caller
// checks that sid is a session id: it becomes a file name.
func Find(projectsDir, sid, cwd string) (Candidates, error) {
	var c Candidates
	name := sid + Ext
	regular := func(p string) bool {
		fi, err := os.Lstat(p)
		if err == nil && !fi.Mode().IsRegular() && c.Hostile == "" {
			c.Hostile = p
		}
		return err == nil && fi.Mode().IsRegular()
	}
	if cwd != "" {
		p := filepath.Join(projectsDir, EncodeProjectDir(cwd), name)
		if regular(p) {
			c.Found = []string{p}
			return c, nil
		}
	}
	ents, err := os.ReadDir(projectsDir)
	if err != nil {
		return c, err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(projectsDir, e.Name(), name)
		if regular(p) {
			c.Found = append(c.Found, p)
		}
	}
	return c, nil
}

// Absent reports whether surely no transcript of session sid is under
// projectsDir: nothing (no regular file, and nothing else) sits at a
// candidate path of [Find], or projectsDir does not exist. A projectsDir
// of "" or one that cannot be listed cannot say: false. The sender
// refuses a line for such a session, and gc and doctor judge an inbox of
// one, by this one rule.
func Absent(projectsDir, sid string) bool {
	if projectsDir == "" {
		return false
	}
	c, err := Find(projectsDir, sid, "")
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return !c.Any()
}
