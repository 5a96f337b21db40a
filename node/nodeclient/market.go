package nodeclient

import (
	"context"

	"github.com/latticenet/lattice/node/nodewire"
)

// Providers returns the providers the node heard of.
func (c *Client) Providers(ctx context.Context) ([]nodewire.Provider, error) {
	var v []nodewire.Provider
	return v, c.do(ctx, "GET", "/providers", nil, &v)
}

// RequestOffers asks the providers for offers on r, through the node.
func (c *Client) RequestOffers(ctx context.Context, r nodewire.ResourceRequest) (nodewire.Offers, error) {
	var v nodewire.Offers
	return v, c.do(ctx, "POST", "/lease/request", r, &v)
}
