package leasenet

import "github.com/latticenet/lattice/ledger"

// Observe is observe, for tests that hand the evidence keeper blocks of
// their own making.
func (s *Service) Observe(b *ledger.Block) { s.observe(b) }
