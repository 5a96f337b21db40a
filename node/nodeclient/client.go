// Package nodeclient is a Go client for the ledger node's HTTP API.
package nodeclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/wallet"
)

// ErrNotFound matches (with errors.Is) an *APIError with status 404.
var ErrNotFound = errors.New("nodeclient: not found")

// APIError is a non-2xx answer from the node.
type APIError struct {
	StatusCode int
	Message    string // the Error body's error field, or the raw body
	// RetryAfter is how long the answer's Retry-After says to wait
	// before trying again (a 429 or a 503 may have one), or zero.
	RetryAfter time.Duration
}

func (e *APIError) Error() string { return fmt.Sprintf("node: %s (HTTP %d)", e.Message, e.StatusCode) }

// Is makes errors.Is(err, ErrNotFound) true for 404 answers.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && e.StatusCode == http.StatusNotFound
}

// Client talks to one node. It is safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
}

// New returns a client for the node at baseURL (such as
// http://127.0.0.1:8080, or 127.0.0.1:8080: an address without a scheme is
// taken as http). A nil hc means http.DefaultClient.
func New(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), hc: hc}
}

// ErrWrongService is wrapped by the error of a request answered by another
// Lattice service (the cloud API, the S3 endpoint) rather than a node.
var ErrWrongService = errors.New("nodeclient: not a ledger node")

// wrongService recognises the answers of the other Lattice services: the
// cloud API's {"error": {"code": ...}} and the S3 endpoint's XML errors.
func wrongService(base string, data []byte) error {
	var cloud struct {
		Error struct{ Code string } `json:"error"`
	}
	switch {
	case json.Unmarshal(data, &cloud) == nil && cloud.Error.Code != "":
		return fmt.Errorf("%w: %s answers as the Lattice cloud API; point --node (or LATTICE_NODE) at a node's URL, which `lattice dev` prints", ErrWrongService, base)
	case bytes.HasPrefix(bytes.TrimSpace(data), []byte("<?xml")) || bytes.Contains(data, []byte("<Error>")):
		return fmt.Errorf("%w: %s answers as an S3 endpoint; point --node (or LATTICE_NODE) at a node's URL, which `lattice dev` prints", ErrWrongService, base)
	}
	return nil
}

// BaseURL returns the node's URL.
func (c *Client) BaseURL() string { return c.base }

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("node %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return c.apiError(resp)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("node %s %s: decode response: %w", method, path, err)
	}
	return nil
}

// apiError reads a non-2xx answer into an *APIError, or the error that
// says another service answered.
func (c *Client) apiError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err := wrongService(c.base, data); err != nil {
		return err
	}
	var e nodewire.Error
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	var retry time.Duration
	if v := resp.Header.Get("Retry-After"); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			// At most a day: a larger number of seconds, scaled to a
			// Duration, could wrap around to a negative wait.
			retry = time.Duration(min(secs, 24*60*60)) * time.Second
		} else if t, err := http.ParseTime(v); err == nil {
			retry = max(0, time.Until(t))
		}
	}
	return &APIError{StatusCode: resp.StatusCode, Message: msg, RetryAfter: retry}
}

// Node returns the node's info.
func (c *Client) Node(ctx context.Context) (nodewire.NodeInfo, error) {
	var v nodewire.NodeInfo
	return v, c.do(ctx, "GET", "/node", nil, &v)
}

// Accounts returns every account.
func (c *Client) Accounts(ctx context.Context) ([]nodewire.Account, error) {
	var v []nodewire.Account
	return v, c.do(ctx, "GET", "/accounts", nil, &v)
}

// Account returns one account.
func (c *Client) Account(ctx context.Context, a ledger.Address) (nodewire.Account, error) {
	var v nodewire.Account
	return v, c.do(ctx, "GET", "/accounts/"+a.String(), nil, &v)
}

// Balance returns an account's non-zero balances by asset name.
func (c *Client) Balance(ctx context.Context, a ledger.Address) (map[string]string, error) {
	var v map[string]string
	return v, c.do(ctx, "GET", "/accounts/"+a.String()+"/balance", nil, &v)
}

// Chain returns an account's blocks, oldest first, each with whether the
// network has confirmed it.
func (c *Client) Chain(ctx context.Context, a ledger.Address) ([]nodewire.Block, error) {
	var v []nodewire.Block
	return v, c.do(ctx, "GET", "/accounts/"+a.String()+"/chain", nil, &v)
}

// Keyset returns a multisig account's keyset.
func (c *Client) Keyset(ctx context.Context, a ledger.Address) (ledger.Keyset, error) {
	var v ledger.Keyset
	return v, c.do(ctx, "GET", "/accounts/"+a.String()+"/keyset", nil, &v)
}

// Block returns a block by hash, with whether the network has confirmed
// it.
func (c *Client) Block(ctx context.Context, h ledger.Hash) (nodewire.Block, error) {
	var v nodewire.Block
	return v, c.do(ctx, "GET", "/blocks/"+h.String(), nil, &v)
}

// Recent returns up to limit recent blocks across accounts, newest first.
func (c *Client) Recent(ctx context.Context, limit int) ([]nodewire.Block, error) {
	var v []nodewire.Block
	return v, c.do(ctx, "GET", "/blocks/recent?limit="+strconv.Itoa(limit), nil, &v)
}

// Submit posts a block to /blocks/{type} and returns its hash.
func (c *Client) Submit(ctx context.Context, b *ledger.Block) (ledger.Hash, error) {
	var v nodewire.BlockHashResponse
	err := c.do(ctx, "POST", "/blocks/"+url.PathEscape(b.Type.String()), b, &v)
	return v.Hash, err
}

// PoW asks the node for a nonce meeting its highest threshold for h.
func (c *Client) PoW(ctx context.Context, h ledger.Hash) (int64, error) {
	var v nodewire.PoWResponse
	return v.Nonce, c.do(ctx, "POST", "/pow", nodewire.PoWRequest{Hash: h}, &v)
}

// Pending returns every pending send, or only those to dest when dest is
// non-nil.
func (c *Client) Pending(ctx context.Context, dest *ledger.Address) ([]nodewire.PendingSend, error) {
	path := "/pending"
	if dest != nil {
		path += "/" + dest.String()
	}
	var v []nodewire.PendingSend
	return v, c.do(ctx, "GET", path, nil, &v)
}

// Frontiers returns every account's latest block hash.
func (c *Client) Frontiers(ctx context.Context) (map[ledger.Address]ledger.Hash, error) {
	var v map[ledger.Address]ledger.Hash
	return v, c.do(ctx, "GET", "/frontiers", nil, &v)
}

// Conflicts returns the recorded fork conflicts, or only account's when
// account is non-nil.
func (c *Client) Conflicts(ctx context.Context, account *ledger.Address) ([]nodewire.Conflict, error) {
	path := "/conflicts"
	if account != nil {
		path += "/" + account.String()
	}
	var v []nodewire.Conflict
	return v, c.do(ctx, "GET", path, nil, &v)
}

// Head returns what a wallet needs to extend a's chain; a new account has
// a zero Head.
func (c *Client) Head(ctx context.Context, a ledger.Address) (wallet.Head, error) {
	h := wallet.Head{Account: a}
	acct, err := c.Account(ctx, a)
	if errors.Is(err, ErrNotFound) {
		return h, nil
	}
	if err != nil {
		return h, err
	}
	h.Frontier = acct.Frontier
	for name, v := range acct.Balances {
		asset, err := ledger.ParseAsset(name)
		if err != nil {
			return h, fmt.Errorf("node: %w", err)
		}
		if h.Balances[asset-1], err = ledger.ParseAmount(v); err != nil {
			return h, fmt.Errorf("node: balance of %s: %w", name, err)
		}
	}
	fb, err := c.Block(ctx, acct.Frontier)
	if err != nil {
		return h, err
	}
	h.Timestamp = fb.Timestamp
	return h, nil
}
