package vmnet

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/access"
	"github.com/latticenet/lattice/node/nodewire"
)

// FuzzDecodeRequest: a peer's vm/1 request frame, any bytes: decoded or
// refused, never a panic, and what decodes names a known op and a lease
// and encodes back to a frame that decodes the same.
func FuzzDecodeRequest(f *testing.F) {
	frame := func(v any) []byte {
		data, _ := json.Marshal(v)
		var b bytes.Buffer
		writeFrame(&b, data)
		return b.Bytes()
	}
	f.Add(frame(wireRequest{Op: opExec, Lease: ledger.Hash{1}, Target: "/vms/x/exec", Authorization: "Lattice-Ed25519 key=", Body: []byte(`{"command":"id"}`)}))
	f.Add(frame(wireRequest{Op: opTunnel, Lease: ledger.Hash{2}, Target: "/tunnel/x/tcp?port=22"}))
	f.Add(frame(map[string]any{"op": "show", "lease": "zz"}))
	f.Add(binary.BigEndian.AppendUint32(nil, 1<<31))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeRequest(bytes.NewReader(data))
		if err != nil {
			return
		}
		if req.Lease.IsZero() || (req.Op != opShow && req.Op != opExec && req.Op != opTunnel) {
			t.Fatalf("decoded %+v", req)
		}
		again, err := decodeRequest(bytes.NewReader(frame(req)))
		if err != nil || again.Op != req.Op || again.Lease != req.Lease || again.Target != req.Target ||
			again.Authorization != req.Authorization || !bytes.Equal(again.Body, req.Body) {
			t.Fatalf("%+v re-encoded decodes to %+v, %v", req, again, err)
		}
	})
}

// FuzzParseExec: an exec body, any bytes: a command that passes is
// non-blank, bounded and free of NUL.
func FuzzParseExec(f *testing.F) {
	f.Add([]byte(`{"command":"uname -a"}`))
	f.Add([]byte(`{"command":""}`))
	f.Add([]byte(`{"command":"a\u0000b"}`))
	f.Add([]byte(`{"command":"x"} {}`))
	f.Add([]byte(`{"command":"x"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseExec(body)
		if err != nil {
			return
		}
		// One JSON object and nothing after it: whatever json.Valid
		// refuses (a stray '}' after the object, two values) is refused.
		if !json.Valid(body) || bytes.TrimSpace(body)[0] != '{' {
			t.Fatalf("accepted a body that is not one JSON object: %q", body)
		}
		if len(bytes.TrimSpace([]byte(req.Command))) == 0 || len(req.Command) > 65536 || bytes.IndexByte([]byte(req.Command), 0) >= 0 {
			t.Fatalf("accepted %q", req.Command)
		}
	})
}

// TestParseExecRefusesWhatFollows: an exec body is one ExecRequest
// object: a stray brace or bracket after it, a second value, null or an
// array is 400 before any command runs.
func TestParseExecRefusesWhatFollows(t *testing.T) {
	for _, body := range []string{`{"command":"id"}}`, `{"command":"id"}]`, `{"command":"id"} {}`, `{"command":"id"} x`, `null`, `[{"command":"id"}]`, ``} {
		if req, err := ParseExec([]byte(body)); !errors.Is(err, ErrBadRequest) {
			t.Errorf("ParseExec(%q) = %+v, %v; want ErrBadRequest", body, req, err)
		}
	}
	if req, err := ParseExec([]byte(" {\"command\":\"id\"}\n")); err != nil || req.Command != "id" {
		t.Errorf("a plain body: %+v, %v", req, err)
	}
}

// TestNoncesOutliveARestart: a credential stamped ahead of the provider's
// clock (within the window), admitted once, is refused as a replay by the
// next guard, made after a restart on the same records: the nonce was
// journaled to the store, synced, and read back; nonces past their time
// are dropped from it.
func TestNoncesOutliveARestart(t *testing.T) {
	dir := t.TempDir()
	net := ledger.Hash{7}
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	var owner ledger.Address
	copy(owner[:], priv.Public().(ed25519.PublicKey))
	r := access.Request{Method: "POST", Target: "/vms/ab/exec", Body: []byte(`{"command":"id"}`)}
	t0 := time.UnixMilli(1767225600000)
	ahead := access.Sign(priv, net, r, t0.Add(4*time.Minute)) // a client clock 4 minutes fast

	open := func(now time.Time) (*Service, *access.Guard) {
		db, err := pebble.Open(dir, &pebble.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := &Service{db: db}
		used, err := s.nonces()
		if err != nil {
			t.Fatal(err)
		}
		g := access.NewGuard(net, func() time.Time { return now })
		g.Keep(nonceJournal{db}, used)
		return s, g
	}
	s, g := open(t0)
	if err := g.Check(ahead, owner, r); err != nil {
		t.Fatalf("the first use: %v", err)
	}
	s.db.Close()

	s, g = open(t0.Add(time.Minute)) // restarted a minute later
	if err := g.Check(ahead, owner, r); !errors.Is(err, access.ErrReplayed) {
		t.Fatalf("the credential replayed after a restart: %v, want ErrReplayed", err)
	}
	s.db.Close()

	// Past its time (twice the window after its use) the nonce is
	// forgotten, in memory and in the store.
	s, g = open(t0.Add(2*access.Window + time.Minute))
	defer s.db.Close()
	if used, err := s.nonces(); err != nil || len(used) != 0 {
		t.Errorf("the journal after the nonce's time: %v, %v; want it empty", used, err)
	}
}

// TestLargestExecCrossesTheNetwork: an exec body as large as the API
// takes (MaxExecBody: the longest command, every byte escaped as Go's
// encoder escapes '<') fits the frame that carries it to the provider,
// so it works through any node as it does at the provider's own.
func TestLargestExecCrossesTheNetwork(t *testing.T) {
	body, err := json.Marshal(nodewire.ExecRequest{Command: strings.Repeat("<", nodewire.MaxCommandBytes)})
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > MaxExecBody {
		t.Fatalf("the largest command's body is %d bytes, over the API's %d", len(body), MaxExecBody)
	}
	body = append(body, bytes.Repeat([]byte(" "), MaxExecBody-len(body))...) // and as much white space as the API allows
	req := wireRequest{Op: opExec, Lease: ledger.Hash{1}, Target: "/vms/" + strings.Repeat("ab", 32) + "/exec",
		Authorization: "Lattice-Ed25519 " + strings.Repeat("x", 400), Body: body}
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var frame bytes.Buffer
	if err := writeFrame(&frame, data); err != nil {
		t.Fatal(err)
	}
	got, err := decodeRequest(&frame)
	if err != nil || !bytes.Equal(got.Body, body) {
		t.Fatalf("a frame of %d bytes (at most %d): %v", len(data), maxRequestFrame, err)
	}
}

// TestPublicReason: a VM record's error, served to anyone, is the first
// line of what failed, not the guest's console or QEMU's log the machine
// driver appends.
func TestPublicReason(t *testing.T) {
	err := fmt.Errorf("qemu: VM ended: abc: QEMU exited with status 1\nconsole.log:\nguest: DB_PASSWORD=hunter2\nqemu.log:\nqemu-system-x86_64: -drive file=/var/lib/lattice/vms/abc/root.qcow2: ...")
	if got := publicReason(err); got != "qemu: VM ended: abc: QEMU exited with status 1" {
		t.Errorf("publicReason = %q", got)
	}
}
