package top

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/progress"
	"github.com/oo-family/oo-claude/internal/termsafe"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// styles are the view's looks: colours only when allowed, the tree's
// glyphs in UTF-8 or ASCII.
type styles struct {
	utf8                           bool
	head, sel, dim, busy, idle, wt lipgloss.Style
	pipe, tee, elbow, space        string
	cursor, riderMark, sendMark    string
	ellipsis, dot                  string
}

func newStyles(color, utf bool) styles {
	// Without colour no attribute at all, bold and reverse included (the
	// program's colour profile drops the framework's own too: Run).
	s := styles{utf8: utf}
	if color {
		s.head = lipgloss.NewStyle().Bold(true)
		s.sel = lipgloss.NewStyle().Reverse(true)
		s.dim = lipgloss.NewStyle().Faint(true)
		s.busy = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
		s.idle = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
		s.wt = lipgloss.NewStyle().Foreground(lipgloss.Color("5"))
	}
	if utf {
		s.pipe, s.tee, s.elbow, s.space = "│  ", "├─ ", "└─ ", "   "
		s.cursor, s.riderMark, s.sendMark, s.ellipsis, s.dot = "▶ ", "↳ ", "» ", "…", " · "
	} else {
		s.pipe, s.tee, s.elbow, s.space = "|  ", "|- ", "`- ", "   "
		s.cursor, s.riderMark, s.sendMark, s.ellipsis, s.dot = "> ", "-> ", ">> ", "...", " | "
	}
	return s
}

// node is one session's place in the tree.
type node struct {
	s      *session
	prefix string // the tree glyphs before the name
	cont   string // the glyphs before the session's detail rows
}

// tree orders the sessions depth first by lineage: a session whose parent
// is not shown is a root; siblings by name, then id. A cycle is cut where
// it closes.
func (m *Model) tree() []node {
	byName := func(a, b *session) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	}
	kids := map[string][]*session{}
	var roots []*session
	for _, s := range m.sessions {
		if p := m.sessions[s.parent]; s.parent != "" && p != nil && p != s && p.station == s.station {
			kids[s.parent] = append(kids[s.parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	if m.grouped() {
		// Station by station, in the order of Options.Stations.
		rank := m.stationRank()
		inner := byName
		byName = func(a, b *session) int {
			if c := rank(a.station) - rank(b.station); c != 0 {
				return c
			}
			return inner(a, b)
		}
	}
	slices.SortFunc(roots, byName)
	for _, k := range kids {
		slices.SortFunc(k, byName)
	}
	out := make([]node, 0, len(m.sessions))
	seen := map[string]bool{}
	var walk func(s *session, lead string, depth int, last bool)
	walk = func(s *session, lead string, depth int, last bool) {
		if seen[s.id] {
			return
		}
		seen[s.id] = true
		n := node{s: s}
		childLead := lead
		if depth > 0 {
			if last {
				n.prefix, childLead = lead+m.st.elbow, lead+m.st.space
			} else {
				n.prefix, childLead = lead+m.st.tee, lead+m.st.pipe
			}
		}
		n.cont = childLead + m.st.space
		out = append(out, n)
		k := kids[s.id]
		for i, c := range k {
			walk(c, childLead, depth+1, i == len(k)-1)
		}
	}
	for _, r := range roots {
		walk(r, "", 0, true)
	}
	// Sessions caught in a parent cycle have no root: show them flat.
	rest := []*session{}
	for _, s := range m.sessions {
		if !seen[s.id] {
			rest = append(rest, s)
		}
	}
	slices.SortFunc(rest, byName)
	for _, s := range rest {
		walk(s, "", 0, true)
	}
	return out
}

// stationList is Options.Stations, then any other station a session
// names.
func (m *Model) stationList() []string {
	out := slices.Clone(m.o.Stations)
	for _, s := range m.sessions {
		if !slices.Contains(out, s.station) {
			out = append(out, s.station)
		}
	}
	slices.Sort(out[len(m.o.Stations):])
	return out
}

// stationRank orders stations as stationList does.
func (m *Model) stationRank() func(string) int {
	list := m.stationList()
	return func(st string) int { return slices.Index(list, st) }
}

// stationHeader is a station's line in a grouped view: its destination,
// its own name, its sessions, and whether it is lost.
func (m *Model) stationHeader(st string, n int) string {
	t := "[" + m.clean(dash(st)) + "]"
	if name := m.names2[st]; name != "" && name != st {
		t += " " + m.clean(name)
	}
	t += fmt.Sprintf("%s%d sessions", m.st.dot, n)
	if why, ok := m.lost[st]; ok {
		t += m.st.dot + "LOST: " + m.clean(why) + " (reconnecting)"
	}
	return m.st.head.Render(m.cut(t, m.w))
}

// View is the frame bubbletea draws: the screen on the alternate screen,
// the cursor hidden, no mouse.
func (m *Model) View() tea.View {
	v := tea.NewView(m.screen())
	v.AltScreen = true
	return v
}

// screen draws the screen: exactly the window's height, no line wider than it.
func (m *Model) screen() string {
	var lines []string
	switch m.mode {
	case modeRead:
		lines = m.readView()
	case modeHelp:
		lines = m.helpView()
	default:
		lines = m.mainView()
	}
	for len(lines) < m.h {
		lines = append(lines, "")
	}
	lines = lines[:m.h]
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.w, "")
	}
	return strings.Join(lines, "\n")
}

// row is one line of the tree pane: a session's own line, one of its
// riders' (rider ≥ 0) or the line sent to it (send).
type row struct {
	n      *node
	rider  int
	send   bool
	header string // a station's header (grouped views): its line, no node
}

func (m *Model) rowText(r row, nameW int, now time.Time) string {
	n := r.n
	switch {
	case n == nil:
		return r.header
	case r.send:
		return "  " + m.cut(n.cont+m.st.sendMark+m.sendLine(n.s.send), m.w-2)
	case r.rider >= 0:
		rd := n.s.riders[r.rider]
		t := n.cont + m.st.riderMark + m.clean(rd.agent)
		if rd.description != "" {
			t += " " + m.clean(rd.description)
		}
		if rd.last != "" {
			t += ": " + m.clean(rd.last)
		}
		return "  " + m.st.dim.Render(m.cut(t, m.w-2))
	}
	return m.sessionLine(*n, nameW, now)
}

func (m *Model) mainView() []string {
	now := m.o.Now()
	order := m.tree()
	sel := m.selected()
	evH := 0
	if m.h >= 10 {
		evH = max((m.h-3)/3, 3)
	}
	treeH := m.h - 2 - evH
	if evH > 0 {
		treeH--
	}
	treeH = max(treeH, 0)

	// The header.
	count := map[string]int{}
	for _, s := range m.sessions {
		count[s.status]++
	}
	head := fmt.Sprintf("oo-claude top%s%s%s%d sessions: %d busy, %d idle, %d waiting", m.st.dot, m.clean(dash(m.o.Station)), m.st.dot,
		len(m.sessions), count[station.StatusBusy], count[station.StatusIdle], count[station.StatusWaiting])
	if m.filter != "" {
		head += m.st.dot + "events of " + m.clean(m.filter)
	}
	clock := now.UTC().Format("15:04:05Z")
	if pad := m.w - ansi.StringWidth(head) - len(clock); pad >= 1 {
		head += strings.Repeat(" ", pad) + clock
	}
	lines := []string{m.st.head.Render(ansi.Truncate(head, m.w, ""))}

	// The tree.
	nameW := 4
	for _, n := range order {
		nameW = max(nameW, ansi.StringWidth(n.prefix)+ansi.StringWidth(m.clean(n.s.name)))
	}
	nameW = min(nameW, max(m.w/4, 12))
	// The rows are laid out first and drawn only when on the screen: a
	// frame costs the screen's rows, not the station's.
	var rows []row
	var stations []string
	perStation := map[string]int{}
	if m.grouped() {
		stations = m.stationList()
		for _, s := range m.sessions {
			perStation[s.station]++
		}
	}
	next := 0 // the next station whose header is due
	header := func(upTo string) {
		for next < len(stations) {
			st := stations[next]
			if upTo != "" && slices.Index(stations, upTo) < next {
				return
			}
			rows = append(rows, row{rider: -1, header: m.stationHeader(st, perStation[st])})
			next++
			if st == upTo {
				return
			}
		}
	}
	for i := range order {
		n := &order[i]
		if m.grouped() && (next == 0 || stations[next-1] != n.s.station) {
			header(n.s.station)
		}
		rows = append(rows, row{n: n, rider: -1})
		for r := range n.s.riders {
			rows = append(rows, row{n: n, rider: r})
		}
		if n.s.send != nil {
			rows = append(rows, row{n: n, rider: -1, send: true})
		}
	}
	header("")
	selRow, selEnd := 0, 0
	for i, r := range rows {
		if sel != nil && r.n != nil && r.n.s == sel {
			if r.rider < 0 && !r.send {
				selRow = i
			}
			selEnd = i
		}
	}
	top := 0
	if treeH > 0 {
		if selEnd-selRow+1 <= treeH && selEnd >= treeH {
			top = selEnd - treeH + 1
		}
		if selRow < top || selRow >= top+treeH {
			top = selRow
		}
	}
	if len(order) == 0 && treeH > 0 && !m.grouped() {
		lines = append(lines, "  (no running sessions)")
	}
	for i := top; i < len(rows) && i < top+treeH; i++ {
		lines = append(lines, m.rowText(rows[i], nameW, now))
	}
	for len(lines) < 1+treeH {
		lines = append(lines, "")
	}

	// The events, newest last.
	if evH > 0 {
		title := "events"
		if m.filter != "" {
			title += " of " + m.clean(m.filter) + " (esc: all)"
		}
		rule := "─"
		if !m.st.utf8 {
			rule = "-"
		}
		t := rule + rule + " " + title + " "
		lines = append(lines, m.st.dim.Render(t+strings.Repeat(rule, max(m.w-ansi.StringWidth(t), 0))))
		var evs []string
		for i := len(m.events) - 1; i >= 0 && len(evs) < evH; i-- {
			if ev := m.events[i]; m.matches(ev) {
				evs = append(evs, m.cut(m.eventLine(ev), m.w))
			}
		}
		slices.Reverse(evs)
		for len(evs) < evH {
			evs = append([]string{""}, evs...)
		}
		lines = append(lines, evs...)
	}

	// The footer.
	var foot string
	switch {
	case m.mode == modeSend && sel != nil:
		foot = "send to " + m.clean(dash(sel.name)) + ": " + m.input.View()
	case m.mode == modeFilter:
		foot = "filter events by session (name or id): " + m.input.View()
	case m.note != "":
		foot = m.clean(m.note)
	case m.closed:
		foot = "the stream ended"
	default:
		foot = m.st.dim.Render("↑↓/jk select  enter read  s send  a reply  / filter  ? keys  q quit")
		if !m.st.utf8 {
			foot = m.st.dim.Render("up/down j/k select  enter read  s send  a reply  / filter  ? keys  q quit")
		}
	}
	lines = append(lines[:min(len(lines), m.h-1)], foot)
	return lines
}

func (m *Model) sessionLine(n node, nameW int, now time.Time) string {
	s := n.s
	cursor := "  "
	if s.id == m.sel {
		cursor = m.st.cursor
	}
	name := n.prefix + m.clean(dash(s.name))
	if w := ansi.StringWidth(name); w < nameW {
		name += strings.Repeat(" ", nameW-w)
	} else {
		name = ansi.Truncate(name, nameW, m.st.ellipsis)
	}
	status := fmt.Sprintf("%-7s", dash(s.status))
	switch s.status {
	case station.StatusBusy:
		status = m.st.busy.Render(status)
	case station.StatusIdle:
		status = m.st.idle.Render(status)
	case station.StatusWaiting:
		status = m.st.wt.Render(status)
	}
	door := dash(s.doorman)
	if s.reason != "" && s.doorman != observatory.DoormanUp {
		door += "(" + m.clean(s.reason) + ")"
	}
	t := fmt.Sprintf("%s%s %s %s door %-9s pend %-3d %4s %-9s", cursor, name, shortID(s.id), status, door, s.pending, age(now, s.started), m.costText(s.cost))
	if s.lastIn != "" {
		t += "  in " + m.quote(s.lastIn)
	}
	if s.lastOut != "" {
		t += "  out " + m.quote(s.lastOut)
	}
	t = m.cut(t, m.w)
	if s.id == m.sel {
		t = m.st.sel.Render(t)
	}
	return t
}

// costText is a session's cost as its transcript tells it, never an
// estimate: Claude Code's dollars as of its last process exit ("$0.0026";
// "≥" when a model had no price), then the tokens of its requests since
// ("$0.0026+1.2k tok", "12.3k tok" with no exit yet; "≥" when the watch's
// look back hit its bound); "-" when nothing is known.
func (m *Model) costText(c *observatory.Cost) string {
	if c == nil {
		return "-"
	}
	atLeast := "≥"
	if !m.st.utf8 {
		atLeast = ">="
	}
	var t string
	if c.USD != nil {
		if c.UnknownModelCost {
			t = atLeast
		}
		t += dollars(*c.USD)
		if c.Tokens > 0 {
			t += "+" + progress.Tokens(c.Tokens) + " tok"
		}
		return t
	}
	if c.Bounded {
		t = atLeast
	}
	return t + progress.Tokens(c.Tokens) + " tok"
}

// dollars is a cost for a person: $0.0026, $1.23, $123; a cost below
// $0.0001 (but not none) is "<$0.0001", never a rounded $0.
func dollars(v float64) string {
	switch {
	case v > 0 && v < 0.0001:
		return "<$0.0001"
	case v < 1:
		return fmt.Sprintf("$%.4f", v)
	case v < 100:
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("$%.0f", v)
}

// sendLine is the verdict of a line sent from the view, as far as it is
// known: the class, confirmed or not, seen or not, then the reply.
func (m *Model) sendLine(st *sendState) string {
	parts := []string{m.quote(st.line)}
	if !st.done {
		return strings.Join(append(parts, "sending"+m.st.ellipsis), m.st.dot)
	}
	v := st.v
	parts = append(parts, string(v.Class))
	if st.late != "" {
		parts = append(parts, "then "+m.clean(st.late)+" (the doorman acked it after the wait)")
	}
	switch {
	case st.delivered():
		switch v.Confirm {
		case inboxv1.ConfirmTranscript:
			parts = append(parts, "confirmed")
		case inboxv1.ConfirmSettle:
			parts = append(parts, "unconfirmed (no transcript)")
		}
		if st.seen {
			parts = append(parts, "seen")
		} else {
			parts = append(parts, "not seen yet")
		}
		switch {
		case !st.asked:
			parts = append(parts, "a: ask the reply")
		case !st.replied:
			parts = append(parts, "waiting for the reply"+m.st.ellipsis)
		case st.reply != nil:
			parts = append(parts, "reply "+m.quote(st.reply.Text))
		case st.replyE != nil:
			parts = append(parts, "no reply: "+m.clean(st.replyE.Error()))
		default:
			parts = append(parts, fmt.Sprintf("no reply within %s", m.o.ReplyWait))
		}
	case v.Class == claudeinbox.Dropped:
		parts = append(parts, fmt.Sprintf("resend after %.0fs", v.RetryAfter.Seconds()))
	}
	if v.Reason != "" {
		parts = append(parts, string(v.Reason))
	}
	if v.Note != "" && !st.delivered() {
		parts = append(parts, m.clean(v.Note))
	}
	if st.err != nil && v.Class != claudeinbox.Refused {
		parts = append(parts, m.clean(st.err.Error()))
	}
	return strings.Join(parts, m.st.dot)
}

// eventLine is one event: its time, its session's name and what happened.
func (m *Model) eventLine(ev observatory.Event) string {
	ts := ev.TS
	if t := parseTS(ts); !t.IsZero() {
		ts = t.UTC().Format("15:04:05")
	}
	who := shortID(ev.Session)
	if s := m.sessions[ev.Session]; s != nil && s.name != "" {
		who = m.clean(s.name)
	} else if n := m.names[ev.Session]; n != "" {
		who = m.clean(n)
	}
	b := []string{ts, who, string(ev.Event)}
	if m.grouped() {
		b = []string{ts, m.clean(dash(ev.Station))}
		if ev.Session != "" {
			b = append(b, who)
		}
		b = append(b, string(ev.Event))
	}
	add := func(v string) {
		if v != "" {
			b = append(b, m.clean(v))
		}
	}
	add(ev.Status)
	add(ev.Doorman)
	add(ev.Reason)
	add(ev.Class)
	add(ev.Agent)
	if ev.Description != "" {
		b = append(b, m.quote(ev.Description))
	}
	if ev.Line != "" {
		b = append(b, m.quote(ev.Line))
	}
	if ev.Text != "" {
		b = append(b, m.quote(ev.Text))
	}
	if ev.Dropped > 0 {
		b = append(b, fmt.Sprintf("dropped %d", ev.Dropped))
	}
	if ev.Cost != nil {
		b = append(b, m.costText(ev.Cost))
	}
	return strings.Join(b, " ")
}

// matches reports whether ev passes the event filter: its session's id or
// name holds the filter text (any case).
func (m *Model) matches(ev observatory.Event) bool {
	if m.filter == "" {
		return true
	}
	f := strings.ToLower(m.filter)
	if strings.Contains(strings.ToLower(ev.Session), f) || strings.Contains(strings.ToLower(ev.Name), f) {
		return true
	}
	s := m.sessions[ev.Session]
	return s != nil && strings.Contains(strings.ToLower(s.name), f)
}

func (m *Model) readView() []string {
	title := "read " + m.clean(m.read.sid) + "  (esc back, j/k scroll)"
	if s := m.sessions[m.read.sid]; s != nil && s.name != "" {
		title = "read " + m.clean(s.name) + " " + shortID(s.id) + "  (esc back, j/k scroll)"
	}
	var body []string
	switch {
	case m.read.err != nil:
		body = []string{m.clean(m.read.err.Error())}
	case m.read.text == "":
		body = []string{"reading" + m.st.ellipsis}
	default:
		for _, l := range strings.Split(strings.TrimRight(m.read.text, "\n"), "\n") {
			body = append(body, m.cleanKeepTabs(l))
		}
	}
	room := max(m.h-1, 0)
	m.read.top = min(m.read.top, max(len(body)-room, 0))
	lines := []string{m.st.head.Render(title)}
	return append(lines, body[m.read.top:min(len(body), m.read.top+room)]...)
}

func (m *Model) helpView() []string {
	up := "↑/↓ j/k"
	if !m.st.utf8 {
		up = "up/down j/k"
	}
	return []string{
		m.st.head.Render("oo-claude top: the keys"),
		"",
		"  " + up + "    select a session (g/G the first, the last)",
		"  enter          its last exchanges (what oo-claude read prints)",
		"  s              send it a line; the verdict shows under it",
		"  a              wait for the reply to the line sent",
		"  /              filter the events by session (name or id); esc clears",
		"  ?              these keys",
		"  q, Ctrl-C      quit",
		"",
		"  Under a session: its riders (" + m.st.riderMark + "), the line sent (" + m.st.sendMark + ") and its verdict:",
		"  the class, confirmed (the receiver's transcript queued it), seen (the model took it), the reply.",
		"",
		"  esc, q or ? to go back",
	}
}

// clean makes outside text one safe line: escaped for the terminal, its
// line breaks as spaces, and in ASCII without UTF-8.
func (m *Model) clean(s string) string {
	s = strings.NewReplacer("\n", " ", "\t", " ").Replace(termsafe.Escape(s))
	if !m.st.utf8 {
		s = asciiOnly(s)
	}
	return s
}

func (m *Model) cleanKeepTabs(s string) string {
	s = strings.ReplaceAll(termsafe.Escape(s), "\t", "    ")
	if !m.st.utf8 {
		s = asciiOnly(s)
	}
	return s
}

func (m *Model) quote(s string) string { return `"` + m.clean(s) + `"` }

// cut shortens s to w cells, with an ellipsis when it had more.
func (m *Model) cut(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, m.st.ellipsis)
}

func asciiOnly(s string) string {
	if isASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortID is the first 8 characters of a session id.
func shortID(id string) string {
	if len(id) <= 8 {
		return id
	}
	return id[:8]
}

// age is how long ago t was, in its largest unit: 45s, 12m, 3h, 2d; "-"
// when unknown.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := max(now.Sub(t), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
