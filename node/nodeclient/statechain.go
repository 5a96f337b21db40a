package nodeclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/statechain"
)

// StateTip returns the latest block of the governance state chain.
func (c *Client) StateTip(ctx context.Context) (*statechain.Block, error) {
	v := new(statechain.Block)
	return v, c.do(ctx, "GET", "/statechain/tip", nil, v)
}

// StateBlock returns the state-chain block at index i.
func (c *Client) StateBlock(ctx context.Context, i uint64) (*statechain.Block, error) {
	v := new(statechain.Block)
	return v, c.do(ctx, "GET", "/statechain/blocks/"+strconv.FormatUint(i, 10), nil, v)
}

// StateBlocks returns the state-chain blocks from index from to index to,
// both included; the node answers at most 100 at a time.
func (c *Client) StateBlocks(ctx context.Context, from, to uint64) ([]*statechain.Block, error) {
	var v []*statechain.Block
	q := url.Values{"from": {strconv.FormatUint(from, 10)}, "to": {strconv.FormatUint(to, 10)}}
	return v, c.do(ctx, "GET", "/statechain/blocks?"+q.Encode(), nil, &v)
}

// SubmitState posts a state-chain block and returns its hash.
func (c *Client) SubmitState(ctx context.Context, b *statechain.Block) (ledger.Hash, error) {
	var v nodewire.BlockHashResponse
	err := c.do(ctx, "POST", "/statechain/blocks", b, &v)
	return v.Hash, err
}

// StateValue returns the value set at key.
func (c *Client) StateValue(ctx context.Context, key string) (nodewire.KeyValue, error) {
	var v nodewire.KeyValue
	return v, c.do(ctx, "GET", "/statechain/kv/"+url.PathEscape(key), nil, &v)
}

// StateKV returns every key set, with its value.
func (c *Client) StateKV(ctx context.Context) (map[string]json.RawMessage, error) {
	var v map[string]json.RawMessage
	return v, c.do(ctx, "GET", "/statechain/kv", nil, &v)
}

// StateKeyset returns the keyset that governs the state chain.
func (c *Client) StateKeyset(ctx context.Context) (ledger.Keyset, error) {
	var v ledger.Keyset
	return v, c.do(ctx, "GET", "/statechain/keyset", nil, &v)
}

// StateParams returns the network's parameters in force.
func (c *Client) StateParams(ctx context.Context) (nodewire.Parameters, error) {
	var v nodewire.Parameters
	return v, c.do(ctx, "GET", "/statechain/params", nil, &v)
}

// StateConflicts returns the state-chain conflicts the node recorded.
func (c *Client) StateConflicts(ctx context.Context) ([]nodewire.StateConflict, error) {
	var v []nodewire.StateConflict
	err := c.do(ctx, "GET", "/statechain/conflicts", nil, &v)
	if err != nil {
		return nil, fmt.Errorf("state-chain conflicts: %w", err)
	}
	return v, nil
}
