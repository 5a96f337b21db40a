package marketnet

import "github.com/latticenet/lattice/market"

// Keep is keep, for tests that hand a node records of their own making,
// as a peer's gossip would.
func (s *Service) Keep(c *market.Capacity) bool { return s.keep(c) }
