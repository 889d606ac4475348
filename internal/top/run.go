package top

import (
	"context"
	"errors"
	"io"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// Run shows the view on the terminal of in and out until q, Ctrl-C, the
// end of ctx or of the stream, and restores the terminal in every case
// (the alternate screen is left, the cursor shown, the input mode reset).
// Nothing but the view is written to out. The end of ctx is not an error.
func Run(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the commands still running (a send's wait, a reply's)
	p := tea.NewProgram(New(ctx, o), programOptions(o, in, out)...)
	// The end of ctx (main's context ends on SIGINT and SIGTERM) quits the
	// program as q does, its terminal restored the same way, not through
	// bubbletea's kill.
	stop := context.AfterFunc(ctx, p.Quit)
	defer stop()
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// frameRate is how many times a second the renderer looks for a changed
// frame. Bubble Tea's renderer wakes on a fixed ticker for the program's
// whole life, changed frame or not, and on this project's 2-core test
// machine each wake-up costs about 0.02% of a core: 30 a second was most
// of the idle view's cost (0.6–1.2% of a core, against a goal of 1%). At
// 25 a key's frame is on the screen within 40 ms plus its drawing (2 ms on
// 200 sessions), inside the 50 ms goal, and the idle view wakes 25 times a
// second, not 60 (bubbletea's default). An open upstream change (a
// renderer that ticks only while a frame is pending) would make both
// figures moot.
const frameRate = 25

func programOptions(o Options, in io.Reader, out io.Writer) []tea.ProgramOption {
	// The colours are the caller's decision (Options.Color), not the
	// framework's guess from the environment: ANSI's 16 colours, or no
	// attribute at all (NoTTY drops bold and reverse too, the editor's
	// cursor included), as NO_COLOR and a dumb terminal want.
	profile := colorprofile.NoTTY
	if o.Color {
		profile = colorprofile.ANSI
	}
	env := o.Environ
	if env == nil {
		env = []string{} // nil would be bubbletea's os.Environ()
	}
	return []tea.ProgramOption{
		tea.WithInput(in),
		tea.WithOutput(out),
		tea.WithFPS(frameRate),
		tea.WithColorProfile(profile),
		tea.WithEnvironment(env),
		// main's context already ends on SIGINT and SIGTERM; in raw mode
		// Ctrl-C is a key the model handles.
		tea.WithoutSignalHandler(),
	}
}
