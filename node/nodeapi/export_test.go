package nodeapi

// Hold counts a request from source against one of the server's limits
// per address ("pow", "offers" or "streams") as if one were open, for
// tests that find the limit full; release ends it.
func (s *Server) Hold(limit, source string) (release func(), err error) {
	return map[string]*inflight{"pow": s.powTurns, "offers": s.offerAsks, "streams": s.streams}[limit].acquire(source)
}
