package nodewire_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
)

// TestParseSubmittedRoundTrip: every block of the ledger's vectors, as the
// API returns it (with confirmed, either way), parses back to the same
// block, so a block read from one node can be submitted to another.
func TestParseSubmittedRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../../ledger/testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Blocks []struct {
			Name  string          `json:"name"`
			Block json.RawMessage `json:"block"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	types := map[ledger.BlockType]bool{}
	for _, v := range f.Blocks {
		b, err := ledger.ParseJSON(v.Block)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		types[b.Type] = true
		for _, confirmed := range []bool{true, false} {
			read, err := json.Marshal(nodewire.Block{Block: b, Confirmed: confirmed})
			if err != nil {
				t.Fatal(err)
			}
			back, err := nodewire.ParseSubmitted(read)
			if err != nil {
				t.Errorf("%s (confirmed %v): ParseSubmitted(%s) = %v", v.Name, confirmed, read, err)
				continue
			}
			if back.Hash != b.Hash || back.ComputeHash() != b.Hash || back.Signature != b.Signature {
				t.Errorf("%s: round trip gave %+v, want %+v", v.Name, back, b)
			}
		}
	}
	if len(types) != 8 {
		t.Errorf("the vectors cover %d block types, want all 8", len(types))
	}
}

// TestParseSubmittedRefuses: only the API's own read-only field is
// accepted, and only in its own shape; every other unknown field is still
// refused by name.
func TestParseSubmittedRefuses(t *testing.T) {
	data, _ := os.ReadFile("../../ledger/testdata/vectors.json")
	var f struct {
		Blocks []struct {
			Block json.RawMessage `json:"block"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(strings.TrimSpace(string(f.Blocks[1].Block)), "}")
	var fields map[string]any
	if err := json.Unmarshal(f.Blocks[1].Block, &fields); err != nil {
		t.Fatal(err)
	}
	fields["type"], fields["confirmed"] = "nosuch", true
	broken, _ := json.Marshal(fields)
	for _, tt := range []struct{ name, body, want string }{
		{"another unknown field", base + `,"confirmed":true,"height":3}`, `unknown field "height"`},
		{"unknown field alone", base + `,"height":3}`, `unknown field "height"`},
		{"confirmed not a boolean", base + `,"confirmed":"yes"}`, `field "confirmed": want true or false`},
		{"trailing data", base + `,"confirmed":true} {}`, `invalid JSON`},
		{"a field of the block broken", string(broken), `nosuch`},
		// The map that takes confirmed out would keep the last of a key
		// given twice, and fold no case: judged before it.
		{"a field twice beside confirmed", base + `,"timestamp":2,"confirmed":true}`, `given twice in one object: "timestamp"`},
		{"confirmed twice", base + `,"confirmed":false,"confirmed":true}`, `given twice in one object: "confirmed"`},
		{"confirmed in capitals", base + `,"Confirmed":true}`, `unknown field "Confirmed"`},
	} {
		_, err := nodewire.ParseSubmitted([]byte(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ParseSubmitted = %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}
