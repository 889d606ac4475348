// Package fakerow writes Claude Code registry rows as the real CLI writes
// them, for the fakes that play sessions: fakestation (a row for a process
// of the test's) and fakeclaude (the fake claude's row for itself). One
// writer, so the two fakes' rows cannot drift apart.
package fakerow

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/oo-family/oo-claude/station"
)

// Version is the Claude Code version the rows carry.
const Version = "2.1.332"

// Fill returns r with the fields every real row carries (version, peer
// protocol and features, pid domain) and the defaults of a session the
// caller left unset: the name derived from the cwd (nameSource derived),
// status busy, kind interactive, entrypoint sdk-cli, started now, the
// update times the start time.
func Fill(r station.Row, now time.Time) station.Row {
	if r.Name == "" {
		var b [1]byte
		rand.Read(b[:])
		r.Name, r.NameSource = filepath.Base(r.CWD)+"-"+hex.EncodeToString(b[:]), "derived"
	} else if r.NameSource == "" {
		r.NameSource = "user"
	}
	if r.Status == "" {
		r.Status = station.StatusBusy
	}
	if r.Kind == "" {
		r.Kind = "interactive"
	}
	if r.Entrypoint == "" {
		r.Entrypoint = "sdk-cli"
	}
	if r.StartedAt == 0 {
		r.StartedAt = now.UnixMilli()
	}
	r.Version, r.PeerProtocol = Version, 1
	r.PeerFeatures = []string{"notify_idle", "reply_across_default_dirs", "artifact_yield"}
	r.PidDomain = "linux:fake:pid:[4026531836]"
	r.NameSince, r.UpdatedAt, r.StatusUpdatedAt = r.StartedAt, r.StartedAt, r.StartedAt
	return r
}

// Path is <sessionsDir>/<pid>.json.
func Path(sessionsDir string, pid int) string {
	return filepath.Join(sessionsDir, strconv.Itoa(pid)+".json")
}

// Write writes row as <sessionsDir>/<pid>.json (0644, as Claude Code does),
// replacing the file atomically, with asksForConvertedSkills: null as the
// real CLI writes it.
func Write(sessionsDir string, row station.Row) error {
	b, err := json.Marshal(row)
	if err != nil {
		return err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	m["asksForConvertedSkills"] = nil
	if b, err = json.Marshal(m); err != nil {
		return err
	}
	path := Path(sessionsDir, row.PID)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
