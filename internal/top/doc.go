// Package top is the model, update and view of `oo-claude top`: a live
// terminal view of a station's sessions, built on the Charm stack v2
// (charm.land's bubbletea, lipgloss, bubbles), that a person can steer
// from. Bubble Tea v2 has no package init that touches the terminal: the
// other verbs of the one binary never query it.
//
// It guarantees:
//
//   - The view reads the station through the observatory alone: the event
//     stream of observatory.Watch (the caller's channel) and, for what the
//     stream does not carry (lineage, riders, pending lines at the start),
//     one observatory document when the view opens and one per session that
//     starts later (Options.Document). It never reads a station file itself.
//   - Every input comes through [Options]: the clock, the sender, the
//     reader of a session's exchanges, the terminal's abilities (colour,
//     UTF-8) and the environment bubbletea is told of (Options.Environ;
//     the colour profile is Options.Color's, not bubbletea's guess).
//     Nothing is read from the environment.
//   - A line is sent with the caller's claudeinbox sender (the one the CLI
//     uses, receipts included) and its verdict is shown in place, under its
//     session, as the sender and the stream report it: the class, whether
//     the receiver's transcript confirmed it, whether the model saw it
//     (the stream's line-seen), then, when asked, the reply.
//   - A session's cost is what the stream's cost events tell: Claude
//     Code's own dollars as of the session's last process exit and the
//     tokens of its requests since, "≥" where that is a lower bound, "-"
//     when nothing is known; never a dollar figure worked out from tokens.
//   - What the view shows of a transcript, a name or a line is escaped
//     (internal/termsafe) and cut to the width; without UTF-8 the tree and
//     the marks are ASCII.
//   - Nothing blocks the update loop: sends, reads, documents and replies
//     run as commands; all of them end with the context given to [Run].
package top
