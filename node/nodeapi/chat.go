package nodeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/nodewire"
)

// maxRecordJSON bounds the body of a chat message or a registration: a
// 4096-byte text escaped as JSON (\u00XX is six bytes per byte) with room
// for the other fields.
const maxRecordJSON = 6*chat.MaxMessageBytes + 1024

// chatRoutes registers the Chat and Directory endpoints.
func (s *Server) chatRoutes(m routes) {
	m.HandleFunc("POST /chat/send", s.chatSend)
	m.HandleFunc("GET /chat/messages", s.chatMessages)
	m.HandleFunc("GET /chat/contacts", s.chatContacts)
	m.HandleFunc("GET /chat/events", s.chatEvents)
	m.HandleFunc("POST /directory/register", s.directoryRegister)
	m.HandleFunc("GET /directory", s.directoryList)
	m.HandleFunc("GET /directory/{account}", s.directoryGet)
}

// decodeRecord decodes a JSON body into v, refusing unknown fields,
// trailing data and bodies over maxRecordJSON.
func decodeRecord(w http.ResponseWriter, r *http.Request, v any) error {
	return decodeLimited(w, r, v, maxRecordJSON)
}

// submitted answers a chat or directory submission by its outcome.
func (s *Server) submitted(w http.ResponseWriter, r *http.Request, what string, err error) {
	var rl *chatnet.RateLimitError
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, nodewire.OkResponse{Ok: true})
	case errors.Is(err, chat.ErrInvalid), errors.Is(err, directory.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.As(err, &rl):
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(rl.RetryAfter.Seconds()))))
		writeError(w, http.StatusTooManyRequests, err.Error())
	case errors.Is(err, chatnet.ErrOutboxFull):
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, "the node's outbox is full of messages waiting for delivery; retry later")
	case errors.Is(err, chatnet.ErrDirectoryFull):
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusServiceUnavailable, "the node's directory is full of registrations submitted to it more recently; sign a new registration and retry later")
	case errors.Is(err, chatnet.ErrUnavailable):
		writeError(w, http.StatusServiceUnavailable, "the node's chat store failed a write; it accepts no "+what+" until it is restarted")
	default:
		s.internal(w, r, err)
	}
}

func (s *Server) chatSend(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Chat.AllowSource(source(r)); err != nil {
		s.submitted(w, r, "messages", err)
		return
	}
	var m nodewire.ChatMessage
	if err := decodeRecord(w, r, &m); err != nil {
		writeError(w, http.StatusBadRequest, "invalid chat message: "+err.Error())
		return
	}
	s.submitted(w, r, "messages", s.opts.Chat.Send(r.Context(), &m))
}

// queryAccount parses the query parameter account of q (queryParams's);
// required says whether it must be there. It returns nil when it is
// absent.
func queryAccount(w http.ResponseWriter, q url.Values, required bool) (*ledger.Address, bool) {
	v := q.Get("account")
	if !q.Has("account") {
		if required {
			writeError(w, http.StatusBadRequest, "the query parameter account is required: ?account=<64 hex characters>")
			return nil, false
		}
		return nil, true
	}
	a, err := ledger.ParseAddress(v)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid account: "+err.Error())
		return nil, false
	}
	return &a, true
}

func (s *Server) chatMessages(w http.ResponseWriter, r *http.Request) {
	q, ok := queryParams(w, r, "account", "since")
	if !ok {
		return
	}
	a, ok := queryAccount(w, q, true)
	if !ok {
		return
	}
	since := int64(-1)
	if q.Has("since") {
		v := q.Get("since")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid since %q: want a Unix time in milliseconds", v))
			return
		}
		since = n
	}
	st := s.newStream(w, '[', ']')
	st.end(s.opts.Chat.Messages(*a, since, func(m *chat.Message) error { return st.elem(m) }))
}

func (s *Server) chatContacts(w http.ResponseWriter, r *http.Request) {
	cs, err := s.opts.Chat.Contacts()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if cs == nil {
		cs = []ledger.Address{}
	}
	writeJSON(w, http.StatusOK, cs)
}

// heartbeat is how often an idle event stream gets a comment line, so
// that proxies and clients see it alive.
const heartbeat = 15 * time.Second

// writeWait bounds each write to an event stream.
const writeWait = 2 * heartbeat

// Bounds of the chat event streams a node holds open: each is a
// goroutine, a socket and a subscription that every new message visits.
// A public address holds at most MaxEventStreamsPerSource of them, so
// that one client cannot take the others' places; loopback, private and
// link-local addresses (the operator's own clients, a reverse proxy) are
// bounded by MaxEventStreams alone.
const (
	MaxEventStreams          = 20000
	MaxEventStreamsPerSource = 16
)

// chatEvents streams new messages as Server-Sent Events: "id: <seq>",
// "event: message", one "data:" line of a ChatMessage, a blank line. A
// client that reconnects with Last-Event-ID gets what it missed first. A
// subscriber that falls behind is dropped, and resumes that way.
func (s *Server) chatEvents(w http.ResponseWriter, r *http.Request) {
	q, ok := queryParams(w, r, "account")
	if !ok {
		return
	}
	a, ok := queryAccount(w, q, false)
	if !ok {
		return
	}
	var after uint64
	resume := r.Header.Get("Last-Event-ID")
	if resume != "" {
		n, err := strconv.ParseUint(resume, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid Last-Event-ID %q: want a decimal event id, as the stream's id lines give", resume))
			return
		}
		// An id beyond the newest is not refused: ids are stored with
		// the messages and go on across restarts, so it can only be of a
		// chat store lost or restored from a backup (or of another
		// node). Nothing of it can be replayed; the stream starts at the
		// current event, and its opening id block moves the client to
		// this node's numbering. A 400 would stop an EventSource for
		// good.
		after = n
	}
	closeStream, ok := s.streams.admit(w, r)
	if !ok {
		return
	}
	defer closeStream()
	// The stream lasts as long as the client stays, but each write must
	// go out within writeWait: a client that stops reading is cut off,
	// not given a goroutine and a socket for as long as TCP takes.
	rc := http.NewResponseController(w)
	sub, last, ok := s.opts.Chat.Subscribe(a)
	defer sub.Close()
	if !ok {
		writeError(w, http.StatusServiceUnavailable, "the node is shutting down")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	buf := []byte("retry: 1000\n\n")
	send := func(ev chatnet.Event) error {
		data, err := json.Marshal(ev.Message)
		if err != nil {
			return err
		}
		buf = strconv.AppendUint(append(buf, "id: "...), ev.Seq, 10)
		buf = append(append(append(buf, "\nevent: message\ndata: "...), data...), "\n\n"...)
		return nil
	}
	flush := func() bool {
		rc.SetWriteDeadline(time.Now().Add(writeWait))
		_, err := w.Write(buf)
		buf = buf[:0]
		return err == nil && rc.Flush() == nil
	}
	if resume != "" && after < last {
		err := s.opts.Chat.Replay(r.Context(), a, after, last, func(ev chatnet.Event) error {
			if err := send(ev); err != nil {
				return err
			}
			if len(buf) >= 32<<10 && !flush() {
				return errors.New("client gone")
			}
			return nil
		})
		if err != nil {
			return
		}
	}
	// An id-only block (no data, so no event) sets the client's last
	// event id to where this stream starts: a client whose stream drops
	// before its first event resumes from here, missing nothing.
	buf = strconv.AppendUint(append(buf, "id: "...), last, 10)
	buf = append(buf, "\n\n"...)
	if !flush() {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			buf = append(buf, ": keep-alive\n\n"...)
		case ev, open := <-sub.C:
			if !open {
				return // dropped for lagging, or the node is stopping
			}
			if ev.Seq <= last || send(ev) != nil {
				continue
			}
		}
		if !flush() {
			return
		}
	}
}

func (s *Server) directoryRegister(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Chat.AllowSource(source(r)); err != nil {
		s.submitted(w, r, "registrations", err)
		return
	}
	var reg nodewire.DirectoryRegistration
	if err := decodeRecord(w, r, &reg); err != nil {
		writeError(w, http.StatusBadRequest, "invalid registration: "+err.Error())
		return
	}
	s.submitted(w, r, "registrations", s.opts.Chat.Register(r.Context(), &reg))
}

func (s *Server) directoryList(w http.ResponseWriter, r *http.Request) {
	st := s.newStream(w, '[', ']')
	st.end(s.opts.Chat.Directory(func(reg *directory.Registration) error { return st.elem(reg) }))
}

func (s *Server) directoryGet(w http.ResponseWriter, r *http.Request) {
	a, ok := pathAddress(w, r, "account")
	if !ok {
		return
	}
	reg, found, err := s.opts.Chat.Lookup(a)
	switch {
	case err != nil:
		s.internal(w, r, err)
	case !found:
		writeError(w, http.StatusNotFound, fmt.Sprintf("account %s is not registered in this node's directory", a))
	default:
		writeJSON(w, http.StatusOK, reg)
	}
}
