package station

// SetDecoded makes s report each registry row it decodes and checks for
// liveness, so a test can hold Resolve to work that does not grow with
// unrelated rows.
func SetDecoded(s *Station, f func(path string)) { s.decoded = f }
