package nodeclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
)

// The Chat and Directory endpoints. A node that runs without them (no
// peer-to-peer network) answers 404 "no endpoint ...".

// SendChat submits a signed chat message (POST /chat/send). The node
// stores it and delivers it to the node where its recipient is registered;
// sending the same message again changes nothing. A message sent faster
// than the node allows fails with a 429 APIError whose RetryAfter says
// when to try again.
func (c *Client) SendChat(ctx context.Context, m *chat.Message) error {
	return c.submitted(ctx, "/chat/send", m)
}

// ChatMessages returns the messages from or to account that the node
// holds, newest first; with since, only those stamped after it (Unix ms,
// exclusive).
func (c *Client) ChatMessages(ctx context.Context, account ledger.Address, since *int64) ([]chat.Message, error) {
	q := url.Values{"account": {account.String()}}
	if since != nil {
		q.Set("since", strconv.FormatInt(*since, 10))
	}
	var v []chat.Message
	return v, c.do(ctx, "GET", "/chat/messages?"+q.Encode(), nil, &v)
}

// ChatContacts returns the accounts that sent or received a message the
// node holds, the most recent conversation first.
func (c *Client) ChatContacts(ctx context.Context) ([]ledger.Address, error) {
	var v []ledger.Address
	return v, c.do(ctx, "GET", "/chat/contacts", nil, &v)
}

// Register submits a signed directory registration (POST
// /directory/register): its account is reached at its node_peer from then
// on. The node gossips it to every node. An older registration than the
// one held fails with a 400 APIError; too many fail with a 429 one.
func (c *Client) Register(ctx context.Context, r *directory.Registration) error {
	return c.submitted(ctx, "/directory/register", r)
}

// Directory returns every registration the node holds, by account.
func (c *Client) Directory(ctx context.Context) ([]directory.Registration, error) {
	var v []directory.Registration
	return v, c.do(ctx, "GET", "/directory", nil, &v)
}

// Registration returns account's registration. An account the node holds
// no registration of gives an *APIError matching ErrNotFound.
func (c *Client) Registration(ctx context.Context, account ledger.Address) (directory.Registration, error) {
	var v directory.Registration
	return v, c.do(ctx, "GET", "/directory/"+account.String(), nil, &v)
}

// submitted posts a chat message or a registration and checks the node's
// {"ok": true}.
func (c *Client) submitted(ctx context.Context, path string, in any) error {
	var v nodewire.OkResponse
	if err := c.do(ctx, "POST", path, in, &v); err != nil {
		return err
	}
	if !v.Ok {
		return fmt.Errorf("node %s POST %s: the node answered without \"ok\": true", c.base, path)
	}
	return nil
}

// ChatEvent is one message of an event stream, with the event's id: pass
// the last one seen to ChatEvents to resume after it.
type ChatEvent struct {
	ID      string
	Message chat.Message
}

// ChatEvents opens the node's stream of new messages (GET /chat/events,
// Server-Sent Events), those from or to account only when account is not
// nil. With lastEventID (the ID of the last event seen on an earlier
// stream) the node first sends what came after it. The stream lasts until
// ctx ends, Close is called or the node ends it; an http.Client Timeout
// would end it too, so use a client without one. The node sends a comment
// every 15 s to keep an idle stream alive.
func (c *Client) ChatEvents(ctx context.Context, account *ledger.Address, lastEventID string) (*EventStream, error) {
	path := "/chat/events"
	if account != nil {
		path += "?account=" + account.String()
	}
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", c.base, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, c.apiError(resp)
	}
	if ct := resp.Header.Get("Content-Type"); !isEventStream(ct) {
		resp.Body.Close()
		return nil, fmt.Errorf("node %s GET %s: answered %q, not an event stream (text/event-stream)", c.base, path, ct)
	}
	p := newSSEParser(resp.Body)
	p.lastID = lastEventID
	return &EventStream{ctx: ctx, body: resp.Body, p: p}, nil
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

// EventStream reads a stream of chat events. It is not safe for
// concurrent use, except that Close may be called at any time to stop a
// Next that waits.
type EventStream struct {
	ctx  context.Context
	body interface{ Close() error }
	p    *sseParser
}

// Next waits for the next message. It returns io.EOF when the node ends
// the stream between events (io.ErrUnexpectedEOF within one), the
// context's error when the context ends, and another error when the
// connection fails or the stream is malformed: in each case, open a new
// stream with LastEventID to resume. An event whose data is not a chat
// message gives an error that wraps ErrBadEvent; the stream may go on
// after it.
func (s *EventStream) Next() (ChatEvent, error) {
	for {
		ev, err := s.p.next()
		if err != nil {
			if cerr := s.ctx.Err(); cerr != nil {
				return ChatEvent{}, cerr
			}
			return ChatEvent{}, err
		}
		if ev.typ != "message" {
			continue
		}
		out := ChatEvent{ID: ev.id}
		if err := json.Unmarshal(ev.data, &out.Message); err != nil {
			return out, fmt.Errorf("%w %q: %v", ErrBadEvent, ev.id, err)
		}
		return out, nil
	}
}

// LastEventID returns the last id the stream gave (or the one it was
// opened with): what ChatEvents takes to resume after it. The node opens
// every stream with an id-only block naming its newest message, so a
// stream that drops before its first event resumes without a gap.
func (s *EventStream) LastEventID() string { return s.p.lastID }

// Close ends the stream.
func (s *EventStream) Close() error { return s.body.Close() }

// ErrBadEvent is wrapped by the error of an event whose data is not a
// chat message.
var ErrBadEvent = errors.New("nodeclient: malformed chat event")
