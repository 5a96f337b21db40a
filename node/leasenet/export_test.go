package leasenet

import "github.com/latticenet/lattice/ledger"

// Observe is observe, for tests that hand the evidence keeper blocks of
// their own making.
func (s *Service) Observe(b *ledger.Block) { s.observe(b) }

// HoldSettling marks lease's block as being made, as a Settle in flight
// would, until the returned function is called.
func (s *Service) HoldSettling(lease ledger.Hash) (release func()) {
	if s.startSettling(lease) != nil {
		panic("leasenet: the lease's block is being made already")
	}
	return func() { s.doneSettling(lease) }
}

// HoldWork takes the slot of Settle's proof-of-work search, as a Settle
// in its search would, until the returned function is called.
func (s *Service) HoldWork() (release func()) {
	s.work <- struct{}{}
	return func() { <-s.work }
}
