// Package station reads the facts of the machine that every other oo-claude
// package builds on: where things live (the environment knobs and their
// defaults), Claude Code's session registry (<config>/sessions/<pid>.json),
// process facts from /proc, liveness, and resolving a user's target (a full
// session id, a pid, a name, a name fragment or an id prefix) to a session.
//
// Nothing here reads the process environment, the clock or /proc on its own:
// a [Station] is given its [Paths], a [Proc] root and a clock, so tests point
// it at a temporary directory. [ConfigFromEnv] is the one place that turns the
// environment knobs into values; the CLI calls it with os.Getenv.
//
// A registry row counts as live only when its pid runs and the process's
// start time equals the row's procStart: a SIGKILLed session leaves its row
// behind, and a recycled pid must not revive it.
package station
