package fleet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/oo-family/oo-claude/observatory"
)

// Events of a merged watch, besides the stations' own.
const (
	// EventStationLost: the connection to a station ended (Text says why);
	// the watch reconnects with backoff.
	EventStationLost = "station-lost"
	// EventStationBack: the station answers again; its sessions as they
	// are follow (initial events).
	EventStationBack = "station-back"
)

// WatchOptions are the inputs of [Watch].
type WatchOptions struct {
	// Only restricts each station's stream to one session id ("" all).
	Only string
	// Backoff is the first wait before a reconnection, doubled up to
	// MaxBackoff; 0 means 1 s and 30 s.
	Backoff, MaxBackoff time.Duration
	// Now stamps the station-lost and station-back events; nil is time.Now.
	Now func() time.Time
}

// Watch merges the event streams of hosts (`oo-claude watch --json` on
// each) in arrival order, each event's Station set to its host's Name,
// until ctx ends; then the channel closes once every ssh has ended. A
// connection that ends is a station-lost event, followed by reconnection
// with backoff and, once it answers again, station-back.
func Watch(ctx context.Context, hosts []Host, o WatchOptions) <-chan observatory.Event {
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	ch := make(chan observatory.Event, 64)
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.follow(ctx, o, ch)
		}()
	}
	go func() {
		wg.Wait()
		close(ch)
	}()
	return ch
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// follow runs one station's watch until ctx ends, reconnecting.
func (h Host) follow(ctx context.Context, o WatchOptions, ch chan<- observatory.Event) {
	wait := o.Backoff
	lost := false
	for ctx.Err() == nil {
		answered, err := h.watchOnce(ctx, o.Only, o.Now, func(ev observatory.Event) {
			if lost {
				lost = false
				send(ctx, ch, observatory.Event{Event: EventStationBack, TS: stamp(o.Now()), Station: h.Name()})
			}
			ev.Station = h.Name()
			send(ctx, ch, ev)
		})
		if ctx.Err() != nil {
			return
		}
		if answered {
			wait = o.Backoff
		}
		if !lost {
			lost = true
			msg := "the connection ended"
			if err != nil {
				msg = err.Error()
			}
			send(ctx, ch, observatory.Event{Event: EventStationLost, TS: stamp(o.Now()), Station: h.Name(), Text: msg})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, o.MaxBackoff)
	}
}

func send(ctx context.Context, ch chan<- observatory.Event, ev observatory.Event) {
	select {
	case ch <- ev:
	case <-ctx.Done():
	}
}

// maxWatchLine bounds a line of a station's watch stream held in memory.
const maxWatchLine = 1 << 20

// readLine reads one line of rd, without its newline, holding at most max
// bytes of it: a longer line is read to its end and dropped (long). err
// is the reader's, the last line (one without a newline) returned beside
// io.EOF.
func readLine(rd *bufio.Reader, max int) (line []byte, long bool, err error) {
	for {
		chunk, err := rd.ReadSlice('\n')
		if !long && len(line)+len(chunk) > max+1 {
			long, line = true, nil
		}
		if !long {
			line = append(line, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return bytes.TrimSuffix(line, []byte("\n")), long, err
		}
	}
}

// watchOnce runs one `watch --json` until it ends; answered says whether
// any event came. now stamps the events of its own (a skipped line).
func (h Host) watchOnce(ctx context.Context, only string, now func() time.Time, emit func(observatory.Event)) (answered bool, err error) {
	args := []string{"watch", "--json"}
	if only != "" {
		args = append(args, "--", only)
	}
	name, argv := h.sshArgs(ctx, args)
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.SysProcAttr = dieWithParent()
	errb := boundedBuffer{max: 64 << 10}
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, &SSHError{Dest: h.Dest, Err: err}
	}
	rd := bufio.NewReaderSize(out, 64<<10)
	for {
		line, long, rerr := readLine(rd, maxWatchLine)
		var ev observatory.Event
		switch {
		case long:
			// Skipped, never the end of the stream: the events after it
			// still come (as the local watch skips an overlong row).
			emit(observatory.Event{Event: observatory.EventWarning, TS: stamp(now()), Text: fmt.Sprintf("a line of the station's watch stream is longer than %d MiB: skipped", maxWatchLine>>20)})
		case json.Unmarshal(line, &ev) == nil && ev.Event != "":
			answered = true
			emit(ev)
		}
		if rerr != nil {
			break
		}
	}
	io.Copy(io.Discard, out) // a read error: ssh's end comes from Wait
	werr := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee) && ee.ExitCode() == ExitSSH:
		return answered, &SSHError{Dest: h.Dest, Stderr: lastLines(errb.b.Bytes()), Err: fmt.Errorf("exit %d", ExitSSH)}
	case werr != nil:
		return answered, fmt.Errorf("%s: watch ended: %w: %s", h.Dest, werr, lastLines(errb.b.Bytes()))
	}
	return answered, nil
}
