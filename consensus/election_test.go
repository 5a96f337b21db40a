package consensus_test

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

// TestElections runs the election scripts of testdata/elections: each file
// is one scene against one Tally, a command per line, checked as it goes.
// The scripts are the specification of elections, quorum, switching and
// final votes in data, as raft's are; docs/testing.md lists the commands.
//
// Names: roots are A to D (account 0x0a.., previous 0x01..), blocks are
// x < y < z < w (their hashes ordered so), o is a block no election is
// started for, and representatives are 1 to 9 (the vector keys of that
// seed).
func TestElections(t *testing.T) {
	files, err := filepath.Glob("testdata/elections/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no election scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}

type script struct {
	t         *testing.T
	pos       string
	tally     *consensus.Tally
	weights   map[ledger.Address]ledger.Amount
	readiness map[ledger.Hash]consensus.Readiness // contenders not Settled
	now       int64
}

func (s *script) weight(a ledger.Address) ledger.Amount { return s.weights[a] }

func (s *script) ready(h ledger.Hash) consensus.Readiness {
	if r, ok := s.readiness[h]; ok {
		return r
	}
	return consensus.Settled
}

func (s *script) fail(format string, args ...any) {
	s.t.Helper()
	s.t.Errorf("%s: %s", s.pos, fmt.Sprintf(format, args...))
}

func runScript(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &script{t: t, weights: map[ledger.Address]ledger.Amount{}, readiness: map[ledger.Hash]consensus.Readiness{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.Index(text, "#"); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		s.pos = fmt.Sprintf("%s:%d: %s", filepath.Base(path), line, strings.Join(fields, " "))
		if s.tally == nil && fields[0] != "params" {
			t.Fatalf("%s: the first command must be params", s.pos)
		}
		s.run(fields[0], fields[1:])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// args splits key=value arguments from plain ones.
func args(in []string) (plain []string, kv map[string]string) {
	kv = map[string]string{}
	for _, a := range in {
		if k, v, ok := strings.Cut(a, "="); ok {
			kv[k] = v
		} else {
			plain = append(plain, a)
		}
	}
	return plain, kv
}

func (s *script) run(cmd string, in []string) {
	plain, kv := args(in)
	if at, ok := kv["at"]; ok {
		s.now = s.num(at)
	}
	switch cmd {
	case "params":
		p := consensus.Params{Total: ledger.NewAmount(uint64(s.num(kv["total"])))}
		if v, ok := kv["window"]; ok {
			p.OnlineWindow = s.num(v)
		}
		if v, ok := kv["elections"]; ok {
			p.MaxElections = int(s.num(v))
		}
		if v, ok := kv["cache"]; ok {
			p.MaxCachedVotes = int(s.num(v))
		}
		if v, ok := kv["timeout"]; ok {
			p.RoundTimeout = s.num(v)
		}
		s.tally = consensus.NewTally(p)
		if want, ok := kv["quorum"]; ok && s.tally.Quorum() != ledger.NewAmount(uint64(s.num(want))) {
			s.fail("quorum %s, want %s", s.tally.Quorum(), want)
		}
	case "weight": // weight 1=20 2=30
		for k, v := range kv {
			s.weights[rep(s.keyNum(k))] = ledger.NewAmount(uint64(s.num(v)))
		}
	case "start": // start A x [err=...]
		err := s.tally.Start(root(plain[0]), blockHash(plain[1]), s.now)
		if want := kv["err"]; !matches(err, want) {
			s.fail("Start = %v, want %s", err, orNone(want))
		}
	case "prevote", "final": // prevote REP [r=N] HASH... [touched=A,B|-]
		var hs []ledger.Hash
		for _, n := range plain[1:] {
			hs = append(hs, blockHash(n))
		}
		got := s.tally.Vote(signedVote(s.keyNum(plain[0]), uint32(s.num(orZero(kv["r"]))), cmd == "final", hs...), s.now)
		if want, ok := kv["touched"]; ok && !slices.Equal(got, roots(want)) {
			s.fail("touched %v, want %s", got, want)
		}
	case "result": // result A round=N tallies=x:60/40,y:40/0 leader=x agreed=true confirmed=x@N|-
		s.checkResult(plain[0], kv)
	case "advise": // advise A SELF want=x@1,x@1:final|-
		got := advice(s.tally.Advise(root(plain[0]), rep(s.keyNum(plain[1])), s.weight, s.ready, s.now))
		if got != kv["want"] {
			s.fail("Advise = %s, want %s", got, kv["want"])
		}
	case "first": // first A SELF HASH want=x@0|x@0,x@0:final|-
		got := advice(s.tally.FirstVote(root(plain[0]), rep(s.keyNum(plain[1])), blockHash(plain[2]), s.weight, s.ready, s.now))
		if got != kv["want"] {
			s.fail("FirstVote = %s, want %s", got, kv["want"])
		}
	case "unready", "ready", "lost": // unready x...: a dependency is not settled (ready: every one is; lost: one lost)
		for _, n := range plain {
			s.readiness[blockHash(n)] = map[string]consensus.Readiness{"unready": consensus.Waiting, "ready": consensus.Settled, "lost": consensus.Lost}[cmd]
		}
	case "deadline": // deadline A want=MS|-
		got := "-"
		if d, ok := s.tally.Deadline(root(plain[0])); ok {
			got = strconv.FormatInt(d, 10)
		}
		if got != kv["want"] {
			s.fail("Deadline = %s, want %s", got, kv["want"])
		}
	case "restore": // restore A [prevote=x@2] [final=y@1] [void]
		rec := consensus.Record{Void: slices.Contains(plain[1:], "void")}
		if v, ok := kv["prevote"]; ok {
			rec.Prevote, rec.PrevoteRound = s.mark(v)
		}
		if v, ok := kv["final"]; ok {
			rec.Final, rec.FinalRound = s.mark(v)
		}
		s.tally.Restore(root(plain[0]), rec)
	case "own": // own A round=N prevote=x|- final=y@1|-   or   own A want=-
		o, ok := s.tally.Own(root(plain[0]))
		got := "-"
		if ok {
			final := "-"
			if !o.Final.IsZero() {
				final = fmt.Sprintf("%s@%d", name(o.Final), o.FinalRound)
			}
			got = fmt.Sprintf("round=%d prevote=%s final=%s", o.Round, name(o.Prevote), final)
		}
		want := "-"
		if _, ok := kv["round"]; ok {
			want = fmt.Sprintf("round=%s prevote=%s final=%s", kv["round"], kv["prevote"], kv["final"])
		}
		if got != want {
			s.fail("Own = %s, want %s", got, want)
		}
	case "polka": // polka A reps=1,2,3|-
		var got []string
		for _, v := range s.tally.Polka(root(plain[0])) {
			if v.Final {
				s.fail("the polka holds a final vote of %s", v.Representative)
			}
			got = append(got, strconv.Itoa(int(keyOf(v.Representative))))
		}
		if want := sortedByAddress(kv["reps"]); !slices.Equal(got, want) {
			s.fail("polka %v, want %v", got, want)
		}
	case "timeout": // timeout r=N want=MS
		if got := s.tally.RoundTimeout(uint32(s.num(kv["r"]))); got != s.num(kv["want"]) {
			s.fail("RoundTimeout = %d, want %s", got, kv["want"])
		}
	case "online": // online want=N
		if got := s.tally.Online(s.weight, s.now); got != ledger.NewAmount(uint64(s.num(kv["want"]))) {
			s.fail("Online = %s, want %s", got, kv["want"])
		}
	case "certificate": // certificate A x r=N reps=1,2,3|-
		var got []string
		for _, v := range s.tally.Certificate(root(plain[0]), blockHash(plain[1]), uint32(s.num(orZero(kv["r"])))) {
			if !v.Final {
				s.fail("certificate holds a non-final vote of %s", v.Representative)
			}
			got = append(got, strconv.Itoa(int(keyOf(v.Representative))))
		}
		want := sortedByAddress(kv["reps"])
		if !slices.Equal(got, want) {
			s.fail("certificate %v, want %v", got, want)
		}
	case "equivocations": // equivocations want=1@A:final,2@B:prevote|-
		var got []string
		for _, e := range s.tally.TakeEquivocations() {
			if e.First.Final != e.Second.Final || e.First.Round != e.Second.Round ||
				e.First.Representative != e.Representative || e.Second.Representative != e.Representative {
				s.fail("equivocation %+v is not two votes of one kind and round of its representative", e)
			}
			kind := "prevote"
			if e.First.Final {
				kind = "final"
			}
			got = append(got, fmt.Sprintf("%d@%s:%s", keyOf(e.Representative), rootName(e.Root), kind))
		}
		if want := list(kv["want"]); !slices.Equal(got, want) {
			s.fail("equivocations %v, want %v", got, want)
		}
	case "finish":
		s.tally.Finish(root(plain[0]))
	case "roots": // roots want=A,B|-
		if got, want := s.tally.Roots(), roots(kv["want"]); !slices.Equal(got, want) {
			s.fail("Roots = %v, want %v", got, want)
		}
	case "contenders": // contenders A want=y,x
		var got []string
		for _, h := range s.tally.Contenders(root(plain[0])) {
			got = append(got, name(h))
		}
		if want := list(kv["want"]); !slices.Equal(got, want) {
			s.fail("contenders %v, want %v", got, want)
		}
	case "stats": // stats elections=N cached=N evictions=N
		st := s.tally.Stats()
		got := fmt.Sprintf("elections=%d cached=%d evictions=%d", st.Elections, st.CachedVotes, st.CacheEvictions)
		want := fmt.Sprintf("elections=%s cached=%s evictions=%s", kv["elections"], kv["cached"], kv["evictions"])
		if got != want {
			s.fail("stats %s, want %s", got, want)
		}
	default:
		s.t.Fatalf("%s: unknown command %q", s.pos, cmd)
	}
}

func (s *script) checkResult(r string, kv map[string]string) {
	res := s.tally.Result(root(r), s.weight)
	if want, ok := kv["round"]; ok && strconv.Itoa(int(res.Round)) != want {
		s.fail("round %d, want %s", res.Round, want)
	}
	if want, ok := kv["tallies"]; ok {
		var got []string
		for _, c := range res.Tallies {
			got = append(got, fmt.Sprintf("%s:%s/%s", name(c.Hash), c.Tally, c.Final))
		}
		if strings.Join(got, ",") != want {
			s.fail("tallies %s, want %s", strings.Join(got, ","), want)
		}
	}
	if want, ok := kv["leader"]; ok && name(res.Leader) != want {
		s.fail("leader %s, want %s", name(res.Leader), want)
	}
	if want, ok := kv["agreed"]; ok && strconv.FormatBool(res.Agreed) != want {
		s.fail("agreed %v, want %s", res.Agreed, want)
	}
	if want, ok := kv["confirmed"]; ok {
		got := "-"
		if res.Confirmed {
			got = fmt.Sprintf("%s@%d", name(res.Winner), res.ConfirmedRound)
		}
		if got != want {
			s.fail("confirmed %s, want %s", got, want)
		}
	}
}

// mark parses "x@N": a block and a round.
func (s *script) mark(v string) (ledger.Hash, uint32) {
	h, n, ok := strings.Cut(v, "@")
	if !ok {
		s.t.Fatalf("%s: %q, want block@round", s.pos, v)
	}
	return blockHash(h), uint32(s.num(n))
}

// advice spells votes to sign as "x@0,x@0:final", or "-" for none.
func advice(as []consensus.Advice) string {
	if len(as) == 0 {
		return "-"
	}
	var out []string
	for _, a := range as {
		w := fmt.Sprintf("%s@%d", name(a.Hash), a.Round)
		if a.Final {
			w += ":final"
		}
		out = append(out, w)
	}
	return strings.Join(out, ",")
}

func orZero(v string) string {
	if v == "" {
		return "0"
	}
	return v
}

func (s *script) num(v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		s.t.Fatalf("%s: %q is not a number", s.pos, v)
	}
	return n
}

func (s *script) keyNum(v string) byte {
	n := s.num(v)
	if n < 1 || n > 9 {
		s.t.Fatalf("%s: representative %q, want 1 to 9", s.pos, v)
	}
	return byte(n)
}

func rep(n byte) ledger.Address {
	var a ledger.Address
	copy(a[:], vecKey(n).Public().(ed25519.PublicKey))
	return a
}

func keyOf(a ledger.Address) byte {
	for n := byte(1); n <= 9; n++ {
		if rep(n) == a {
			return n
		}
	}
	return 0
}

var blockNames = map[string]byte{"x": 0x11, "y": 0x22, "z": 0x33, "w": 0x44, "o": 0x99}

func blockHash(n string) ledger.Hash {
	b, ok := blockNames[n]
	if !ok {
		panic("unknown block name " + n)
	}
	return ledger.Hash{b}
}

func name(h ledger.Hash) string {
	for n, b := range blockNames {
		if h == (ledger.Hash{b}) {
			return n
		}
	}
	if h.IsZero() {
		return "-"
	}
	return h.String()
}

func root(n string) consensus.Root {
	if len(n) != 1 || n[0] < 'A' || n[0] > 'H' {
		panic("unknown root name " + n)
	}
	i := n[0] - 'A'
	return consensus.Root{Account: ledger.Address{0xa + i}, Previous: ledger.Hash{1 + i}}
}

func rootName(r consensus.Root) string { return string(rune('A' + r.Account[0] - 0xa)) }

func list(v string) []string {
	if v == "-" || v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func roots(v string) []consensus.Root {
	var rs []consensus.Root
	for _, n := range list(v) {
		rs = append(rs, root(n))
	}
	return rs
}

// sortedByAddress orders representative numbers as a certificate does.
func sortedByAddress(v string) []string {
	ns := list(v)
	slices.SortFunc(ns, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		ra, rb := rep(byte(x)), rep(byte(y))
		return bytes.Compare(ra[:], rb[:])
	})
	return ns
}

func matches(err error, want string) bool {
	switch want {
	case "":
		return err == nil
	case "too-many-elections":
		return errors.Is(err, consensus.ErrTooManyElections)
	case "too-many-contenders":
		return errors.Is(err, consensus.ErrTooManyContenders)
	case "elsewhere":
		return errors.Is(err, consensus.ErrContenderElsewhere)
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "no error"
	}
	return s
}

// TestQuorum checks the quorum rule at its boundaries: more than two
// thirds, exactly, for totals that three divides and that it does not.
func TestQuorum(t *testing.T) {
	for _, tt := range []struct{ total, want uint64 }{
		{1, 1}, {2, 2}, {3, 3}, {4, 3}, {5, 4}, {6, 5}, {100, 67}, {99, 67}, {300, 201}, {3_000_000_000_000, 2_000_000_000_001},
	} {
		got := consensus.Quorum(ledger.NewAmount(tt.total))
		if got != ledger.NewAmount(tt.want) {
			t.Errorf("Quorum(%d) = %s, want %d", tt.total, got, tt.want)
		}
		// The least weight above two thirds: two quorums share more than
		// a third of the total.
		if _, q := got.Parts(); 3*q <= 2*tt.total || 3*(q-1) > 2*tt.total {
			t.Errorf("Quorum(%d) = %d is not the least weight above two thirds", tt.total, q)
		}
	}
}

func TestElectionListing(t *testing.T) {
	tl := consensus.NewTally(consensus.Params{Total: ledger.NewAmount(100)})
	rootA, rootB := root("A"), root("B")
	h1, h2, h3 := blockHash("x"), blockHash("y"), blockHash("z")
	for _, s := range []struct {
		root consensus.Root
		h    ledger.Hash
	}{{rootB, h3}, {rootA, h2}, {rootA, h1}} {
		if err := tl.Start(s.root, s.h, 100); err != nil {
			t.Fatal(err)
		}
	}
	tl.Vote(signedVote(2, 0, false, h1), 110)
	tl.Vote(signedVote(1, 3, true, h2), 120)
	if got := tl.Roots(); len(got) != 2 || got[0] != rootA || got[1] != rootB {
		t.Errorf("Roots = %v, want rootA, rootB", got)
	}
	info, ok := tl.Election(rootA)
	if !ok || info.Root != rootA || info.Started != 100 || len(info.Contenders) != 2 || info.Contenders[0] != h2 || info.Contenders[1] != h1 {
		t.Errorf("Election(rootA) = %+v, %v, want started 100, contenders h2, h1", info, ok)
	}
	wantChoices := []consensus.Choice{{rep(1), h2, 3, true}, {rep(2), h1, 0, false}}
	if r1, r2 := rep(1), rep(2); bytes.Compare(r2[:], r1[:]) < 0 {
		wantChoices[0], wantChoices[1] = wantChoices[1], wantChoices[0]
	}
	if !slices.Equal(info.Choices, wantChoices) {
		t.Errorf("choices %+v, want %+v", info.Choices, wantChoices)
	}
}
