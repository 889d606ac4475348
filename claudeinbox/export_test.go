package claudeinbox

// WithPriority is withPriority, for the fuzz test of what it keeps.
func WithPriority(line, p string) (string, string) { return withPriority(line, p) }
