package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// The dev network's data layout: node 0 keeps its ledger in DATA/node,
// the single node's directory, so that `lattice dev --nodes 3` after
// `lattice dev` is the same ledger with two more nodes, which sync from
// node 0; node i ≥ 1 keeps its own in DATA/node-i. Running fewer nodes
// later leaves the others' directories as they are, and node 0 votes with
// the keys of the nodes left out, so that the weight they were given still
// counts and the smaller network keeps confirming.

// devNodeDir is the data directory of node i of the dev network in data.
func devNodeDir(data string, i int) string {
	if i == 0 {
		return filepath.Join(data, "node")
	}
	return filepath.Join(data, "node-"+strconv.Itoa(i))
}

// devLeftOut returns the numbers of the nodes of the dev network in data
// that have a data directory but are not among the first count, in order.
func devLeftOut(data string, count int) ([]int, error) {
	entries, err := os.ReadDir(data)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "node-")
		if !ok || !e.IsDir() {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil || i < count || strconv.Itoa(i) != n {
			continue
		}
		out = append(out, i)
	}
	sort.Ints(out)
	return out, nil
}

// devLeftOutKeys returns the node keys of the nodes left out (see
// devLeftOut): node 0 votes with them. A node that never started has no
// key yet and none is returned for it.
func devLeftOutKeys(data string, leftOut []int) ([]wallet.Key, error) {
	var keys []wallet.Key
	for _, i := range leftOut {
		k, err := wallet.LoadKey(filepath.Join(devNodeDir(data, i), "node-key.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the key of node %d, left out: %w", i, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// migrateDevLayout brings a dev data directory of an earlier version to
// today's layout and says what it did. Earlier versions kept a multi-node
// network's nodes in DATA/node-0 … DATA/node-N−1, a ledger apart from the
// single node's DATA/node. When only the multi-node ledger exists, its
// node 0 becomes DATA/node. When both exist they are two ledgers of one
// genesis that must never meet: the multi-node one is moved, whole, to
// DATA/earlier-nodes-TIME, kept for the user to look at or delete.
func migrateDevLayout(data string, now time.Time) (string, error) {
	old0 := filepath.Join(data, "node-0")
	if _, err := os.Stat(old0); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	if _, err := os.Stat(devNodeDir(data, 0)); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(old0, devNodeDir(data, 0)); err != nil {
			return "", err
		}
		return fmt.Sprintf("moved node 0's data from %s to %s (the layout of this version)", old0, devNodeDir(data, 0)), nil
	} else if err != nil {
		return "", err
	}
	aside := filepath.Join(data, "earlier-nodes-"+now.UTC().Format("20060102T150405Z"))
	if err := os.Mkdir(aside, 0o700); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(data)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "node-")
		if _, err := strconv.Atoi(n); !ok || err != nil || !e.IsDir() {
			continue
		}
		if err := os.Rename(filepath.Join(data, e.Name()), filepath.Join(aside, e.Name())); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("moved the nodes of an earlier multi-node ledger, apart from %s, to %s", devNodeDir(data, 0), aside), nil
}

// devWeightless returns the numbers of the nodes, other than node 0, whose
// own account holds no native balance in node 0's ledger: they vote with
// no weight.
func devWeightless(nodes []*devNode) ([]int, error) {
	n0 := nodes[0].node()
	var out []int
	for i, d := range nodes[1:] {
		acct, found, err := n0.Store.Account(d.node().Key.Address())
		if err != nil {
			return nil, err
		}
		if !found || acct.Balance(ledger.Native).IsZero() {
			out = append(out, i+1)
		}
	}
	return out, nil
}

// joinInts is "1", "1 and 2" or "1, 2 and 3".
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
