package chatnet

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/wallet"
)

// TestReplayEndsWithItsContext: a replay stops at the page after its
// context ends, not at the end of the store: an event stream's replay
// whose account filter matches nothing writes nothing, so only its
// context tells it that its client hung up.
func TestReplayEndsWithItsContext(t *testing.T) {
	st, err := openStore("chat", vfs.NewMem(), 100, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	from, to := wallet.NewKey(), wallet.NewKey()
	for i := range 600 { // more than two pages
		m := &chat.Message{From: from.Address(), To: to.Address(), Message: "hi", Timestamp: int64(1 + i)}
		m.Sign(from.Private())
		if _, _, err := st.addMessage(m, false); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	pages := 0
	err = st.since(ctx, 0, st.lastSeq(), func(seq uint64, _ *chat.Message) error {
		if seq%256 == 1 {
			pages++
		}
		cancel() // the client hangs up during the first page
		return nil
	})
	if !errors.Is(err, context.Canceled) || pages != 1 {
		t.Fatalf("a replay whose client hung up: %v after %d pages, want context.Canceled after 1", err, pages)
	}
	n := 0
	if err := st.since(context.Background(), 0, st.lastSeq(), func(uint64, *chat.Message) error { n++; return nil }); err != nil || n != 600 {
		t.Fatalf("a whole replay: %d messages, %v", n, err)
	}
}
