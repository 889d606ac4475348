package station_test

import (
	"errors"
	"testing"

	"github.com/oo-family/oo-claude/station"
)

// TestNoPanicOnZeroValues: the exported constructors and methods answer
// zero values, empty strings and impossible pids with a result or an
// error, never a panic.
func TestNoPanicOnZeroValues(t *testing.T) {
	stations := map[string]*station.Station{"zero": {}, "New(Paths{})": station.New(station.Paths{})}
	for name, st := range stations {
		t.Run(name, func(t *testing.T) {
			_, _ = st.Live()
			_, _ = st.LiveByPID(-1)
			_, _ = st.LiveByPID(0)
			_, _, _ = st.LiveBySessionID("")
			for _, target := range []string{"", "-", "0", "-1", "99999999999999999999", "../x", "\x00"} {
				_, _ = st.Resolve(target)
			}
			_ = st.KeyFile(station.Row{})
			_, _ = st.PeerToken(station.Row{})
			_, _ = st.PeerToken(station.Row{PID: -1, SessionID: "../../x"})
			_, _, _ = st.CallingSession(-1, "")
			_, _, _ = st.CallingSession(0, "not-a-uuid")
			_ = st.Clock()()
		})
	}
	var p station.Proc
	for _, pid := range []int{-1, 0, 1 << 40} {
		_, _ = p.Info(pid)
		_, _ = p.Ancestors(pid)
		_, _ = p.Cmdline(pid)
		_, _ = p.Exe(pid)
		_, _ = p.ExeInfo(pid)
		_ = p.Alive(pid, "")
		_ = p.IsDescendant(pid, pid, "")
	}
	_ = station.ProcInfo{}.Zombie()
	_, _ = station.ReadRow("")
	_ = station.IsSessionID("")
	_ = station.DefaultConfig(station.Paths{})
	_, _ = station.PathsFromEnv(func(string) string { return "" })
	_, _ = station.ConfigFromEnv(func(string) string { return "" })
	// A nil getenv is an environment with nothing set: no HOME.
	if _, err := station.PathsFromEnv(nil); !errors.Is(err, station.ErrNoHome) {
		t.Errorf("PathsFromEnv(nil): %v, want ErrNoHome", err)
	}
	if _, err := station.ConfigFromEnv(nil); !errors.Is(err, station.ErrNoHome) {
		t.Errorf("ConfigFromEnv(nil): %v, want ErrNoHome", err)
	}
	var tok station.Token
	_, _, _ = tok.String(), tok.GoString(), tok.IsZero()
	_, _ = tok.MarshalJSON()
	_, _ = tok.MarshalText()
	_ = (&station.KnobError{}).Error()
	_ = (&station.TargetError{}).Error()
}
