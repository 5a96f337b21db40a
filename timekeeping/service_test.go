package timekeeping_test

import (
	"encoding/json"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/timekeeping"
	"github.com/latticenet/lattice/wallet"
)

// TestDue holds an honest timekeeper's rules: start only while open and
// before the deadline, expire from the deadline while not started, end
// once an active lease has run.
func TestDue(t *testing.T) {
	open := &ledger.LeaseRecord{Created: 1000, AcceptTimeout: 600, Duration: 60}
	accepted := *open
	accepted.Accept = ledger.Hash{1}
	active := accepted
	active.Stage, active.StartTime = ledger.StageActive, 1100
	ended := active
	ended.Stage = ledger.StageEnded
	tests := []struct {
		name string
		r    *ledger.LeaseRecord
		p    ledger.Purpose
		now  int64
		ok   bool
	}{
		{"start while open", open, timekeeping.Start, 1599, true},
		{"start at the deadline", open, timekeeping.Start, 1600, false},
		{"start once accepted", &accepted, timekeeping.Start, 1100, false},
		{"expire before the deadline", open, timekeeping.Expire, 1599, false},
		{"expire at the deadline", open, timekeeping.Expire, 1600, true},
		{"expire an accepted lease not started", &accepted, timekeeping.Expire, 1700, true},
		{"expire an active lease", &active, timekeeping.Expire, 1700, false},
		{"end before its time", &active, timekeeping.End, 61099, false},
		{"end at its time", &active, timekeeping.End, 61100, true},
		{"end an open lease", open, timekeeping.End, 99999, false},
		{"end an ended lease", &ended, timekeeping.End, 99999, false},
		{"started before an accept", open, timekeeping.Started, 1100, false},
		{"started once accepted, before the deadline", &accepted, timekeeping.Started, 1599, true},
		{"started at the deadline", &accepted, timekeeping.Started, 1600, false},
		{"started once started", &active, timekeeping.Started, 1200, false},
		{"unknown purpose", open, 9, 1100, false},
	}
	for _, tt := range tests {
		if err := timekeeping.Due(tt.r, tt.p, tt.now); (err == nil) != tt.ok {
			t.Errorf("%s: Due = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
	if p, ok := timekeeping.NextPurpose(open, 1599); !ok || p != timekeeping.Start {
		t.Errorf("NextPurpose of an open lease = %v, %v", p, ok)
	}
	if _, ok := timekeeping.NextPurpose(&ended, 99999); ok {
		t.Error("NextPurpose of an ended lease says something is due")
	}
}

// TestPick: of gathered attestations, Pick keeps valid ones by distinct
// members within one precision window, enough for the committee, and the
// set it picks is one Judge accepts.
func TestPick(t *testing.T) {
	net := ledger.Hash{9}
	lease := ledger.Hash{7}
	var keys []wallet.Key
	var c timekeeping.Committee
	for range 4 {
		k := wallet.NewKey()
		keys = append(keys, k)
		c.Keys = append(c.Keys, k.Address())
	}
	c.Threshold, c.PrecisionMS = 3, 1000
	sign := func(i int, ts int64) ledger.Attestation {
		return timekeeping.Sign(keys[i].Private(), net, timekeeping.Start, lease, ts)
	}
	stranger := timekeeping.Sign(wallet.NewKey().Private(), net, timekeeping.Start, lease, 5000)
	wrongPurpose := timekeeping.Sign(keys[3].Private(), net, timekeeping.End, lease, 5000)
	got, err := timekeeping.Pick(net, c, timekeeping.Start, lease, []ledger.Attestation{
		sign(0, 5000), sign(1, 5400), sign(0, 5100) /* a member twice */, stranger, wrongPurpose, sign(2, 9000) /* far off */, sign(3, 5900),
	})
	if err != nil || len(got) != 3 {
		t.Fatalf("Pick = %v, %v; want 3 (keys 0, 1, 3)", got, err)
	}
	if _, err := timekeeping.Judge(net, c, timekeeping.Start, lease, got); err != nil {
		t.Fatalf("Judge refuses what Pick picked: %v", err)
	}
	if _, err := timekeeping.Pick(net, c, timekeeping.Start, lease, []ledger.Attestation{sign(0, 1), sign(1, 5000), sign(2, 9000)}); err == nil {
		t.Fatal("Pick found 3 within 1000 ms among times 1, 5000 and 9000")
	}
}

// FuzzPick: whatever Pick picks from any gathering, Judge accepts.
func FuzzPick(f *testing.F) {
	keys := []wallet.Key{wallet.NewKey(), wallet.NewKey(), wallet.NewKey()}
	net, lease := ledger.Hash{1}, ledger.Hash{2}
	c := timekeeping.Committee{Threshold: 2, PrecisionMS: 100}
	for _, k := range keys {
		c.Keys = append(c.Keys, k.Address())
	}
	f.Add(int64(1000), int64(1050), int64(1200), uint8(7))
	f.Fuzz(func(t *testing.T, a, b, d int64, mask uint8) {
		var atts []ledger.Attestation
		for i, ts := range []int64{a, b, d} {
			if mask&(1<<i) != 0 {
				atts = append(atts, timekeeping.Sign(keys[i].Private(), net, timekeeping.Start, lease, ts))
			}
		}
		got, err := timekeeping.Pick(net, c, timekeeping.Start, lease, atts)
		if err != nil {
			return
		}
		if _, err := timekeeping.Judge(net, c, timekeeping.Start, lease, got); err != nil {
			t.Fatalf("Judge refuses Pick's set %+v: %v", got, err)
		}
	})
}

// FuzzAnnouncementJSON: an announcement that checks survives its JSON.
func FuzzAnnouncementJSON(f *testing.F) {
	net := ledger.Hash{3}
	a := timekeeping.Announcement{NodePeer: "12D3KooWExample", Timestamp: 1767225600000}
	a.Sign(wallet.NewKey().Private(), net)
	data, _ := json.Marshal(a)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var a timekeeping.Announcement
		if json.Unmarshal(data, &a) != nil || a.Check(net) != nil {
			return
		}
		again, _ := json.Marshal(a)
		var b timekeeping.Announcement
		if json.Unmarshal(again, &b) != nil || b.Check(net) != nil || b != a {
			t.Fatal("a valid announcement does not survive its JSON")
		}
	})
}
