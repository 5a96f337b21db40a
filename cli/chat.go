package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/wallet"
)

// chatCommands are the subcommands of `lattice chat`.
func chatCommands() []command {
	return []command{
		{"send", "sign and send a message", runChatSend},
		{"read", "show your messages, oldest first", runChatRead},
		{"follow", "print your messages as they arrive", runChatFollow},
		{"contacts", "list the accounts with messages on the node", runChatContacts},
	}
}

const chatUsage = `Usage: lattice chat COMMAND [ARGS] [flags]

Signed messages between accounts. A message is signed with your key and
sent to the node you use, which delivers it to the node where its recipient
is registered (` + "`lattice directory register`" + `). With --encrypt only you and
the recipient can read it. Messages to you reach the node you registered
at: read and follow them there.

Commands:
  send --to ADDRESS [--encrypt] TEXT...   sign and send a message
  read [--with ADDRESS] [--since T]       show your messages, oldest first
  follow                                  print your messages as they arrive
  contacts                                list the accounts with messages on the node

Every command takes --node URL (env LATTICE_NODE) and --json; send, read
and follow also --key FILE (env LATTICE_KEY). Both come from the profile in
use unless given.

Examples:
  lattice directory register                # once: messages to you reach this node
  BOB=$(lattice key show --key bob.json)    # an address: 64 hex digits
  lattice chat send --to $BOB hello bob
  lattice chat send --to $BOB --encrypt the door code is 4711
  lattice chat read --with $BOB --since 1h
  lattice chat follow

Run ` + "`lattice chat COMMAND -h`" + ` for a command's flags.
`

// runChat is `lattice chat COMMAND ...`.
func runChat(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		io.WriteString(e.stderr, chatUsage)
		return usageErr("want send, read, follow or contacts")
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		io.WriteString(e.stdout, chatUsage)
		return nil
	}
	for _, c := range chatCommands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	var names []string
	for _, c := range chatCommands() {
		names = append(names, c.name)
	}
	return usageErr("unknown command %q%s; run `lattice chat -h`", args[0], suggestion(args[0], names))
}

const directoryUsage = `Usage: lattice directory COMMAND [ARGS] [flags]

The directory says at which node each account receives its messages; every
node holds it and the newest registration of an account wins. Register at
the node you read your messages from, again whenever you move to another.

Commands:
  register          register your account at the node you use
  show [ADDRESS]    show where an account (default: yours) is registered

Every command takes --node URL (env LATTICE_NODE), --key FILE (env
LATTICE_KEY), both from the profile in use unless given, and --json.

Examples:
  lattice directory register
  lattice directory show
  lattice directory show $(lattice key show --key bob.json) --node http://127.0.0.1:8081

Run ` + "`lattice directory COMMAND -h`" + ` for a command's flags.
`

// runDirectory is `lattice directory COMMAND ...`.
func runDirectory(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		io.WriteString(e.stderr, directoryUsage)
		return usageErr("want register or show")
	}
	switch args[0] {
	case "help", "-h", "--help":
		io.WriteString(e.stdout, directoryUsage)
		return nil
	case "register":
		return runDirectoryRegister(ctx, e, args[1:])
	case "show":
		return runDirectoryShow(ctx, e, args[1:])
	}
	return usageErr("unknown command %q%s; run `lattice directory -h`", args[0], suggestion(args[0], []string{"register", "show"}))
}

// newHelpFlags is newFlags with a -h that also says what the command does
// and shows examples.
func newHelpFlags(e *env, name, usageLine, about, examples string) *flags {
	f := newFlags(e, name, usageLine)
	f.Usage = func() {
		fmt.Fprintf(f.Output(), "Usage: lattice %s\n\n%s\n\nFlags:\n", strings.TrimSpace(usageLine), strings.TrimSpace(about))
		f.PrintDefaults()
		fmt.Fprintf(f.Output(), "\nExamples:\n%s", examples)
	}
	return f
}

// noArgs refuses positional arguments of a command that takes none,
// naming the word and, when it looks like a flag's value, the flag it
// probably meant: a word a command ignored once acted on the wrong key.
func noArgs(f *flags) error {
	if f.NArg() == 0 {
		return nil
	}
	word := f.Arg(0)
	hint := ""
	for _, g := range []struct {
		flag  string
		looks func(string) bool
	}{
		{"key", func(w string) bool { return strings.HasSuffix(w, ".json") }},
		{"to", func(w string) bool { _, err := ledger.ParseAddress(w); return err == nil }},
		{"amount", func(w string) bool { return w != "" && strings.Trim(w, "0123456789.") == "" }},
	} {
		if f.Lookup(g.flag) != nil && g.looks(word) {
			hint = fmt.Sprintf(" (did you mean --%s %s?)", g.flag, word)
			break
		}
	}
	return usageErr("unexpected argument %q%s: lattice %s takes no arguments besides its flags; run `lattice %s -h`", word, hint, f.Name(), f.Name())
}

// chatErr explains a failed request to the chat or directory endpoints:
// a node that runs without them says "no endpoint"; a node that cannot
// be reached gets unreachable's hint.
func chatErr(node string, err error) error {
	if noEndpoint(err) {
		return fmt.Errorf("the node at %s serves no chat or directory (%v): it runs without the peer-to-peer network; use a node of `lattice dev` or `lattice node`", node, err)
	}
	return unreachable(node, err)
}

// noEndpoint reports whether err is a node's 404 for a path it does not
// serve, rather than for a thing it does not hold.
func noEndpoint(err error) bool {
	var apiErr *nodeclient.APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound && strings.HasPrefix(apiErr.Message, "no endpoint ")
}

// checkText refuses a text the node would refuse, naming the limit.
func checkText(text string, encrypt bool) error {
	switch {
	case strings.TrimSpace(text) == "":
		return usageErr("the text is empty: give the TEXT to send after the flags")
	case !utf8.ValidString(text):
		return usageErr("the text is not valid UTF-8")
	case encrypt && len(text) > chat.MaxSealedPlaintext:
		return usageErr("the text is %d bytes; an encrypted message carries at most %d bytes (%d unencrypted)",
			len(text), chat.MaxSealedPlaintext, chat.MaxMessageBytes)
	case len(text) > chat.MaxMessageBytes:
		return usageErr("the text is %d bytes; a message carries at most %d bytes", len(text), chat.MaxMessageBytes)
	}
	return nil
}

func runChatSend(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "chat send", "chat send --to ADDRESS [--encrypt] TEXT... [flags]", fmt.Sprintf(`
Signs a message with your key, stamped now, and sends it to the node you
use, which delivers it to the node where the recipient is registered
(while the recipient is not, it keeps trying, for a week by default).
Flags go before TEXT: from its first word on, everything is text, joined
by spaces ("-la" included); put "--" before a text that starts with "-".
A word of TEXT that is one of the flags below ("hi --encrypt") is refused,
so that a misplaced flag never sends in the clear; after "--" it is text.
A message carries at most %d bytes of UTF-8; with --encrypt, at
most %d, encrypted so that only you and the recipient can read it (X25519
of your keys, AES-256-GCM).

With --sign-only it prints the signed message, the JSON body of POST
/chat/send, on one line and sends nothing: post it within 5 minutes, the
node's clock window.`, chat.MaxMessageBytes, chat.MaxSealedPlaintext), `  BOB=$(lattice key show --key bob.json)    # an address: 64 hex digits
  lattice chat send --to $BOB hello bob
  lattice chat send --to $BOB --encrypt -- -5 degrees and snowing
  lattice chat send --to $BOB --json hi      # prints the signed message
  lattice chat send --to $BOB please run ls -la now
  lattice chat send --to $BOB --sign-only hi > msg.json   # then: curl --data-binary @msg.json $NODE/chat/send
`)
	cf := addClientFlags(f, false)
	to := f.String("to", "", "the recipient's address (required)")
	encrypt := f.Bool("encrypt", false, "encrypt end to end: only you and the recipient can read the text")
	signOnly := signOnlyFlag(f, "the signed message, the JSON body of POST /chat/send,")
	f.textAfterFlags = true
	if err := f.parse(args); err != nil {
		return err
	}
	if *to == "" {
		return usageErr("--to is required: the recipient's address")
	}
	dest, err := ledger.ParseAddress(*to)
	if err != nil {
		return usageErr("--to: %v", err)
	}
	if f.NArg() == 0 {
		return usageErr("want the TEXT to send: lattice chat send --to ADDRESS TEXT...")
	}
	text := strings.Join(f.Args(), " ")
	if err := checkText(text, *encrypt); err != nil {
		return err
	}
	s, err := cf.connect(ctx, true)
	if err != nil {
		return err
	}
	m := chat.Message{To: dest, Timestamp: nowMS()}
	if *encrypt {
		if err := chat.Seal(s.key.Private(), &m, []byte(text), rand.Reader); err != nil {
			return fmt.Errorf("cannot encrypt for %s: it is not an account's public key, so nobody could read the message (check --to)", dest)
		}
	} else {
		m.Message = text
	}
	m.Sign(s.key.Private())
	if *signOnly {
		return printBody(e.stdout, &m)
	}
	if err := s.c.SendChat(ctx, &m); err != nil {
		return chatErr(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, reveal(s.key, m).json())
	}
	how := ""
	if *encrypt {
		how = ", end-to-end encrypted"
	}
	fmt.Fprintf(e.stdout, "sent to %s%s\nmessage %s\n", dest, how, m.Hash())
	// Say where the message and its replies will wait, if anywhere.
	if _, err := s.c.Registration(ctx, dest); errors.Is(err, nodeclient.ErrNotFound) {
		fmt.Fprintf(e.stderr, "note: %s is not in the directory yet; the node delivers the message once they run `lattice directory register`\n", shortAddr(dest))
	}
	noteWhereYouAre(ctx, e, s, "replies")
	return nil
}

// noteWhereYouAre tells the user, on stderr, when messages to them do not
// arrive at the node they use: they are not registered, or registered at
// another node. what names the messages: "replies", "messages to you".
func noteWhereYouAre(ctx context.Context, e *env, s *session, what string) {
	reg, err := s.c.Registration(ctx, s.account)
	switch {
	case errors.Is(err, nodeclient.ErrNotFound):
		fmt.Fprintf(e.stderr, "note: you are not in the directory: %s wait on their senders' nodes until you run `lattice directory register`\n", what)
	case err == nil && s.info.PeerID != "" && reg.NodePeer != s.info.PeerID:
		fmt.Fprintf(e.stderr, "note: you are registered at another node (peer %s): %s reach you there, not here\n", reg.NodePeer, what)
	}
}

// sinceFlag parses --since: Unix milliseconds, an RFC 3339 time, or a
// duration meaning that long before now.
func sinceFlag(v string, now time.Time) (int64, error) {
	bad := usageErr("--since %q: want Unix milliseconds (1795526291371), an RFC 3339 time (2026-11-24T13:18:11Z) or a duration ago (90s, 30m, 1h)", v)
	if v == "" {
		return 0, bad
	}
	if strings.Trim(v, "0123456789") == "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, bad
		}
		return ms, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UnixMilli(), nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d).UnixMilli(), nil
	}
	return 0, bad
}

// revealed is a message as its reader sees it: sealed ones opened with the
// reader's key.
type revealed struct {
	m      chat.Message
	text   string // the plaintext of a sealed message, else the message
	sealed bool
	err    error // why a sealed message does not open
}

func reveal(k wallet.Key, m chat.Message) revealed {
	r := revealed{m: m, text: m.Message, sealed: chat.IsSealed(&m)}
	if !r.sealed {
		return r
	}
	pt, err := chat.Open(k.Private(), &m)
	switch {
	case err != nil:
		r.err = err
	case !utf8.Valid(pt):
		r.err = errors.New("the decrypted text is not UTF-8")
	default:
		r.text = string(pt)
	}
	return r
}

// chatJSON is a message in --json output: the ChatMessage, with its
// plaintext when it was sealed and opened, or why it did not open.
type chatJSON struct {
	chat.Message
	Plaintext    *string `json:"plaintext,omitempty"`
	DecryptError string  `json:"decrypt_error,omitempty"`
}

func (r revealed) json() chatJSON {
	out := chatJSON{Message: r.m}
	switch {
	case r.err != nil:
		out.DecryptError = strings.TrimPrefix(r.err.Error(), "chat: ")
	case r.sealed:
		out.Plaintext = &r.text
	}
	return out
}

// shortAddr abbreviates an address for a person: its first 6 and last 4
// hex digits.
func shortAddr(a ledger.Address) string {
	s := a.String()
	return s[:6] + "…" + s[len(s)-4:]
}

// line shows a message on one line (more for a text of several lines):
// local time, who to whom ("you" for the reader), and the text, with a
// lock on one that was end-to-end encrypted.
func (r revealed) line(me ledger.Address) string {
	who := func(a ledger.Address) string {
		if a == me {
			return "you"
		}
		return shortAddr(a)
	}
	prefix := fmt.Sprintf("%s  %s → %s  ", time.UnixMilli(r.m.Timestamp).Local().Format(time.DateTime), who(r.m.From), who(r.m.To))
	text := printable(r.text)
	switch {
	case r.err != nil:
		text = "🔒 [encrypted; cannot decrypt: " + strings.TrimPrefix(r.err.Error(), "chat: ") + "]"
	case r.sealed:
		text = "🔒 " + text
	}
	indent := "\n" + strings.Repeat(" ", utf8.RuneCountInString(prefix))
	return prefix + strings.ReplaceAll(text, "\n", indent)
}

// printable replaces what a terminal would act on rather than show:
// control characters (escape sequences, carriage returns) but newline and
// tab, and the bidirectional overrides that reorder what follows.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case unicode.IsControl(r), 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069:
			return '\uFFFD'
		}
		return r
	}, s)
}

func runChatRead(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "chat read", "chat read [--with ADDRESS] [--since T] [flags]", `
Shows the messages from and to your account that the node holds, oldest
first, in local time: "you" is you, others are shortened to the first 6 and
last 4 digits of their address. Encrypted messages are decrypted with your
key and marked 🔒. Messages to you are on the node you registered at
(`+"`lattice directory register`"+`); those you sent, on the node you sent them to.`,
		`  lattice chat read
  lattice chat read --with $(lattice key show --key bob.json) --since 1h
  lattice chat read --since 2026-11-24T08:00:00Z --json
`)
	cf := addClientFlags(f, false)
	with := f.String("with", "", "only the conversation with this address")
	since := f.String("since", "", "only messages stamped after T: Unix milliseconds, an RFC 3339 time, or a duration ago like 1h")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	var other *ledger.Address
	if *with != "" {
		a, err := ledger.ParseAddress(*with)
		if err != nil {
			return usageErr("--with: %v", err)
		}
		other = &a
	}
	var after *int64
	if *since != "" {
		ms, err := sinceFlag(*since, time.Now())
		if err != nil {
			return err
		}
		after = &ms
	}
	s, err := cf.connect(ctx, true)
	if err != nil {
		return err
	}
	noteWhereYouAre(ctx, e, s, "messages to you")
	msgs, err := s.c.ChatMessages(ctx, s.account, after)
	if err != nil {
		return chatErr(*cf.node, err)
	}
	var shown []revealed
	for _, m := range slices.Backward(msgs) { // the node lists newest first
		if other != nil && !(m.From == *other && m.To == s.account) && !(m.From == s.account && m.To == *other) {
			continue
		}
		shown = append(shown, reveal(s.key, m))
	}
	slices.SortStableFunc(shown, func(a, b revealed) int { return cmp.Compare(a.m.Timestamp, b.m.Timestamp) })
	if *cf.json {
		out := make([]chatJSON, len(shown))
		for i, r := range shown {
			out[i] = r.json()
		}
		return printJSON(e.stdout, out)
	}
	if len(shown) == 0 {
		what := "no messages"
		if other != nil {
			what += " with " + other.String()
		}
		if after != nil {
			what += " since " + time.UnixMilli(*after).Local().Format(time.DateTime)
		}
		fmt.Fprintf(e.stdout, "%s on the node at %s\n", what, *cf.node)
		return nil
	}
	for _, r := range shown {
		fmt.Fprintln(e.stdout, r.line(s.account))
	}
	return nil
}

// follower prints the messages of one account as its node's event stream
// brings them, resuming after the last id the stream gave when it drops
// (the node opens each stream with an id, so no message falls in a gap).
type follower struct {
	e      *env
	s      *session
	asJSON bool
	lastID string
}

func (fl *follower) print(m chat.Message) error {
	r := reveal(fl.s.key, m)
	if fl.asJSON {
		data, err := json.Marshal(r.json())
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(fl.e.stdout, "%s\n", data)
		return err
	}
	_, err := fmt.Fprintln(fl.e.stdout, r.line(fl.s.account))
	return err
}

func runChatFollow(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "chat follow", "chat follow [flags]", `
Prints the messages from and to your account as the node stores them,
until Ctrl-C, decrypting encrypted ones as `+"`chat read`"+` does. With --json
each message is one line of JSON: the ChatMessage, plus "plaintext" when
it was encrypted and decrypted (or "decrypt_error"). When the stream
drops, follow reconnects after a short wait and resumes after the last
message it saw.`,
		`  lattice chat follow
  lattice chat follow --json | jq -r '.plaintext // .message'
  lattice chat follow --node http://127.0.0.1:8081 --key bob.json
`)
	cf := addClientFlags(f, false)
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	s, err := cf.connect(ctx, true)
	if err != nil {
		return err
	}
	noteWhereYouAre(ctx, e, s, "messages to you")
	fl := &follower{e: e, s: s, asJSON: *cf.json}
	const minWait, maxWait = time.Second, 30 * time.Second
	wait := minWait
	connected := false // once: later failures are retried
	for {
		stream, err := s.c.ChatEvents(ctx, &s.account, fl.lastID)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var apiErr *nodeclient.APIError
			isAPI := errors.As(err, &apiErr)
			if !connected || errors.Is(err, nodeclient.ErrWrongService) ||
				(isAPI && apiErr.StatusCode/100 == 4 && apiErr.StatusCode != http.StatusTooManyRequests) {
				return chatErr(*cf.node, err)
			}
			pause := wait
			if isAPI && apiErr.RetryAfter > 0 {
				pause = min(apiErr.RetryAfter, 5*maxWait)
			}
			fmt.Fprintf(e.stderr, "cannot reconnect to %s: %v; retrying in %s\n", *cf.node, err, pause)
			if !sleepCtx(ctx, pause) {
				return nil
			}
			wait = min(2*wait, maxWait)
			continue
		}
		if !connected {
			fmt.Fprintf(e.stderr, "following the messages of %s at %s (Ctrl-C to stop)\n", s.account, *cf.node)
		} else {
			fmt.Fprintln(e.stderr, "reconnected")
		}
		connected, wait = true, minWait
		for {
			var ev nodeclient.ChatEvent
			if ev, err = stream.Next(); err != nil {
				if errors.Is(err, nodeclient.ErrBadEvent) {
					fmt.Fprintf(e.stderr, "skipped an event: %v\n", err)
					continue
				}
				break
			}
			if err = fl.print(ev.Message); err != nil {
				stream.Close()
				return err // stdout is gone
			}
		}
		fl.lastID = stream.LastEventID()
		stream.Close()
		if ctx.Err() != nil {
			return nil
		}
		fmt.Fprintf(e.stderr, "the stream from %s ended (%v); reconnecting in %s\n", *cf.node, err, wait)
		if !sleepCtx(ctx, wait) {
			return nil
		}
		wait = min(2*wait, maxWait)
	}
}

// sleepCtx waits d, or until ctx ends: it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func runChatContacts(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "chat contacts", "chat contacts [flags]", `
Lists the accounts that sent or received a message the node holds, one
address a line, the most recent conversation first: every account's, not
only yours.`,
		`  lattice chat contacts
  lattice chat contacts --json --node http://127.0.0.1:8081
`)
	node := f.string("node", "LATTICE_NODE", "", "http://127.0.0.1:8080", "node API URL")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	cs, err := nodeclient.New(*node, nil).ChatContacts(ctx)
	if err != nil {
		return chatErr(*node, err)
	}
	if *asJSON {
		if cs == nil {
			cs = []ledger.Address{}
		}
		return printJSON(e.stdout, cs)
	}
	if len(cs) == 0 {
		fmt.Fprintf(e.stderr, "no messages on the node at %s yet\n", *node)
	}
	for _, a := range cs {
		fmt.Fprintln(e.stdout, a)
	}
	return nil
}

func runDirectoryRegister(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "directory register", "directory register [flags]", `
Registers your account at the node you use: signs, with your key, that
messages to you are delivered to that node (its peer ID, which it reports
at GET /node), stamped now. The node spreads the registration to every
node; a later one, at this node or another, replaces it.

With --sign-only it prints the signed registration, the JSON body of POST
/directory/register, on one line and submits nothing: post it within 5
minutes, the node's clock window.`,
		`  lattice directory register
  lattice directory register --node http://127.0.0.1:8081 --key bob.json
  lattice directory register --key bob.json --sign-only > reg.json   # then: curl --data-binary @reg.json $NODE/directory/register
`)
	cf := addClientFlags(f, false)
	signOnly := signOnlyFlag(f, "the signed registration, the JSON body of POST /directory/register,")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	s, err := cf.connect(ctx, true)
	if err != nil {
		return err
	}
	if s.info.PeerID == "" {
		return fmt.Errorf("the node at %s reports no peer ID: it is not on a peer-to-peer network, so no message can be delivered to it", *cf.node)
	}
	prev, err := s.c.Registration(ctx, s.account)
	moved := err == nil && prev.NodePeer != s.info.PeerID
	if err != nil && !errors.Is(err, nodeclient.ErrNotFound) {
		return chatErr(*cf.node, err)
	}
	r := directory.Registration{NodePeer: s.info.PeerID, Timestamp: nowMS()}
	r.Sign(s.key.Private())
	if *signOnly {
		return printBody(e.stdout, &r)
	}
	if err := s.c.Register(ctx, &r); err != nil {
		return chatErr(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "registered %s at the node at %s (peer %s)\n", s.account, *cf.node, r.NodePeer)
	if moved {
		fmt.Fprintf(e.stdout, "moved from peer %s: messages sent to you from now on arrive here; those delivered there stay there\n", prev.NodePeer)
	}
	fmt.Fprintf(e.stdout, "messages to you are delivered there: read them with `lattice chat read%s` or `lattice chat follow%s`\n", cf.sameFlags(), cf.sameFlags())
	return nil
}

func runDirectoryShow(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "directory show", "directory show [ADDRESS] [flags]", `
Shows the registration of ADDRESS (default: your account) that the node
holds: the peer ID of the node its messages are delivered to, and when it
was registered. An account without one gets no messages until its owner
runs `+"`lattice directory register`"+`; messages to it wait on their senders' nodes.`,
		`  lattice directory show
  lattice directory show $(lattice key show --key bob.json) --json
`)
	cf := addClientFlags(f, false)
	if err := f.parse(args); err != nil {
		return err
	}
	addr, err := cf.target(f.Args())
	if err != nil {
		return err
	}
	own := f.NArg() == 0
	s, err := cf.connect(ctx, false)
	if err != nil {
		return err
	}
	reg, err := s.c.Registration(ctx, addr)
	if errors.Is(err, nodeclient.ErrNotFound) && !noEndpoint(err) {
		if own {
			return fmt.Errorf("your account %s is not registered in the directory of the node at %s: run `lattice directory register` so that messages reach you", addr, *cf.node)
		}
		return fmt.Errorf("account %s is not registered in the directory of the node at %s: messages to it wait on their senders' nodes until its owner runs `lattice directory register`", addr, *cf.node)
	}
	if err != nil {
		return chatErr(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, reg)
	}
	where := ""
	if reg.NodePeer == s.info.PeerID {
		where = "  (the node at " + *cf.node + ")"
	}
	tw := table(e.stdout)
	fmt.Fprintf(tw, "account\t%s\n", reg.Account)
	fmt.Fprintf(tw, "node peer\t%s%s\n", reg.NodePeer, where)
	fmt.Fprintf(tw, "registered\t%s\n", when(reg.Timestamp, nowMS()))
	return tw.Flush()
}
