package nodeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/govnet"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/statechain"
)

// MaxStateRange is how many blocks GET /statechain/blocks answers at most.
const MaxStateRange = 100

// maxStateBlockJSON bounds a submitted state-chain block: the largest
// value escaped as JSON, sixteen signatures and the other fields.
const maxStateBlockJSON = 6*statechain.MaxValueBytes + 8192

// stateRoutes registers the State chain endpoints.
func (s *Server) stateRoutes(m routes) {
	m.HandleFunc("GET /statechain/tip", s.stateTip)
	m.HandleFunc("GET /statechain/blocks/{index}", s.stateBlock)
	m.HandleFunc("GET /statechain/blocks", s.stateBlocks)
	m.HandleFunc("POST /statechain/blocks", s.stateSubmit)
	m.HandleFunc("GET /statechain/kv/{key}", s.stateKey)
	m.HandleFunc("GET /statechain/kv", s.stateKV)
	m.HandleFunc("GET /statechain/keyset", s.stateKeyset)
	m.HandleFunc("GET /statechain/params", s.stateParams)
	m.HandleFunc("GET /statechain/conflicts", s.stateConflicts)
}

func (s *Server) stateTip(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.opts.StateChain.Tip())
}

// parseIndex parses a state-chain index.
func parseIndex(v, name string) (uint64, error) {
	i, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a non-negative integer", name, v)
	}
	return i, nil
}

func (s *Server) stateBlock(w http.ResponseWriter, r *http.Request) {
	i, err := parseIndex(r.PathValue("index"), "index")
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	b, ok := s.opts.StateChain.Block(i)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("state-chain block %d not found: the tip is %d", i, s.opts.StateChain.Tip().Index))
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// stateBlocks answers the blocks from `from` (default 0) to `to` (default
// from+99), both included, oldest first, at most MaxStateRange of them.
func (s *Server) stateBlocks(w http.ResponseWriter, r *http.Request) {
	q, ok := queryParams(w, r, "from", "to")
	if !ok {
		return
	}
	var from, to uint64
	var err error
	if q.Has("from") {
		if from, err = parseIndex(q.Get("from"), "from"); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	to = from + MaxStateRange - 1
	if to < from { // past the largest index: to the end
		to = math.MaxUint64
	}
	if q.Has("to") {
		if to, err = parseIndex(q.Get("to"), "to"); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if to < from {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("to (%d) is below from (%d)", to, from))
			return
		}
	}
	blocks := s.opts.StateChain.Range(from, to, MaxStateRange)
	if blocks == nil {
		blocks = []*statechain.Block{}
	}
	writeJSON(w, http.StatusOK, blocks)
}

func (s *Server) stateSubmit(w http.ResponseWriter, r *http.Request) {
	var b statechain.Block
	if err := decodeLimited(w, r, &b, maxStateBlockJSON); err != nil {
		writeError(w, http.StatusBadRequest, "invalid state-chain block: "+err.Error())
		return
	}
	h, err := s.opts.StateChain.Submit(r.Context(), &b)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, nodewire.BlockHashResponse{Hash: h})
	case isStateRefusal(err):
		writeError(w, http.StatusBadRequest, "invalid state-chain block: "+err.Error())
	default:
		s.internal(w, r, err)
	}
}

// isStateRefusal reports whether err says the block is refused (400), as
// opposed to the node failing.
func isStateRefusal(err error) bool {
	for _, k := range []error{statechain.ErrMalformed, statechain.ErrBadHash, statechain.ErrBadSignature,
		statechain.ErrUnauthorized, statechain.ErrGap, statechain.ErrWrongPrevious, statechain.ErrStale,
		statechain.ErrTimestamp, statechain.ErrInvalidValue, govnet.ErrEarly, govnet.ErrHalted, govnet.ErrRejected} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

func (s *Server) stateKey(w http.ResponseWriter, r *http.Request) {
	k := r.PathValue("key")
	e, ok := s.opts.StateChain.State().Get(k)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("state-chain key %q is not set", k))
		return
	}
	writeJSON(w, http.StatusOK, nodewire.KeyValue{Key: k, Value: json.RawMessage(e.Value), Index: e.Index})
}

func (s *Server) stateKV(w http.ResponseWriter, _ *http.Request) {
	st := s.opts.StateChain.State()
	out := map[string]json.RawMessage{}
	for _, k := range st.Keys() {
		e, _ := st.Get(k)
		out[k] = json.RawMessage(e.Value)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) stateKeyset(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.opts.StateChain.State().Keyset())
}

func (s *Server) stateParams(w http.ResponseWriter, _ *http.Request) {
	st := s.opts.StateChain.State()
	out := nodewire.Parameters{Index: st.Index(), Parameters: []nodewire.Parameter{}}
	for _, p := range statechain.Parameters {
		v := nodewire.Parameter{Key: p.Key, Value: json.RawMessage(p.Default), Doc: p.Doc}
		if e, ok := st.Get(p.Key); ok {
			v.Value, v.Set, v.Index = json.RawMessage(e.Value), true, &e.Index
		}
		out.Parameters = append(out.Parameters, v)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) stateConflicts(w http.ResponseWriter, _ *http.Request) {
	out := []nodewire.StateConflict{}
	for _, c := range s.opts.StateChain.Conflicts() {
		out = append(out, nodewire.StateConflict{Index: c.Index, Hashes: [2]ledger.Hash{c.Blocks[0].Hash, c.Blocks[1].Hash},
			Blocks: c.Blocks, DetectedAt: c.DetectedAt.Format("2006-01-02T15:04:05.000Z07:00"), Resolved: c.Resolved})
	}
	writeJSON(w, http.StatusOK, out)
}
