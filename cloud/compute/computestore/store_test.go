package computestore

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/latticenet/lattice/cloud/compute/computerules"
)

var images = []computerules.Image{{Name: "minimal", MinMemoryMB: 256}}

func open(t *testing.T, dir string, capacity computerules.Resources) *Store {
	t.Helper()
	s, err := Open(dir, Options{Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordsSurviveReopen: what the store acknowledged is there after a
// reopen, status and all; a removed VM is not.
func TestRecordsSurviveReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "compute")
	s := open(t, dir, computerules.Resources{})
	a, err := s.Create("alice", computerules.Spec{Name: "a", Image: "minimal", UserData: "echo hi"}, images)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create("alice", computerules.Spec{Name: "b", Image: "minimal"}, images)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SetStatus(a.ID, computerules.Provisioning, computerules.Running, ""); !ok || err != nil {
		t.Fatalf("SetStatus: %v %v", ok, err)
	}
	if err := s.UserDataDone(a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(b.ID); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir, computerules.Resources{})
	defer s.Close()
	got, err := s.Get("alice", a.ID)
	if err != nil || got.Status != computerules.Running || !got.UserDataRan || got.UserData != "echo hi" || got.MemoryMB != computerules.DefaultMemoryMB {
		t.Errorf("after reopen: %+v, %v", got, err)
	}
	if _, err := s.Get("alice", b.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("removed VM after reopen: %v", err)
	}
	if _, err := s.Get("bob", a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another account's VM: %v", err)
	}
}

// TestSetStatusOnlyFrom: the host's progress applies only to the status
// it acted on, so a change made meanwhile is never overwritten.
func TestSetStatusOnlyFrom(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "compute"), computerules.Resources{})
	defer s.Close()
	v, err := s.Create("alice", computerules.Spec{Name: "a", Image: "minimal"}, images)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.SetStatus(v.ID, computerules.Starting, computerules.Running, ""); ok {
		t.Error("SetStatus from a status the VM is not in changed it")
	}
	if ok, _ := s.SetStatus("nope", computerules.Provisioning, computerules.Running, ""); ok {
		t.Error("SetStatus of an unknown VM")
	}
	if got, _ := s.Get("alice", v.ID); got.Status != computerules.Provisioning {
		t.Errorf("status %s", got.Status)
	}
}

// TestPowerOnChecksCapacity: a stopped VM holds no vCPUs or memory, so
// powering it on is checked against the host again; its disk always
// counts.
func TestPowerOnChecksCapacity(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "compute"), computerules.Resources{VCPUs: 2, DiskGB: 10})
	defer s.Close()
	a, err := s.Create("alice", computerules.Spec{Name: "a", Image: "minimal", VCPUs: 2, DiskGB: 4}, images)
	if err != nil {
		t.Fatal(err)
	}
	s.SetStatus(a.ID, computerules.Provisioning, computerules.Running, "")
	if _, err := s.Power("alice", a.ID, computerules.Off); err != nil {
		t.Fatal(err)
	}
	s.SetStatus(a.ID, computerules.Stopping, computerules.Stopped, "")
	if h := s.HostUsage(); h.VCPUs != 0 || h.DiskGB != 4 {
		t.Errorf("host usage with the VM stopped: %+v", h)
	}
	if _, err := s.Create("alice", computerules.Spec{Name: "big-disk", Image: "minimal", DiskGB: 7}, images); !errors.Is(err, computerules.ErrCapacity) {
		t.Errorf("a disk past the host's: %v", err)
	}
	b, err := s.Create("alice", computerules.Spec{Name: "b", Image: "minimal", VCPUs: 1}, images)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Power("alice", a.ID, computerules.On); !errors.Is(err, computerules.ErrCapacity) {
		t.Errorf("power on past the host's vCPUs: %v", err)
	}
	if got, _ := s.Get("alice", a.ID); got.Status != computerules.Stopped {
		t.Errorf("a refused power on changed the VM: %s", got.Status)
	}
	if _, err := s.Delete("alice", b.ID); !errors.Is(err, computerules.ErrBusy) {
		t.Errorf("delete while provisioning: %v", err)
	}
	s.SetStatus(b.ID, computerules.Provisioning, computerules.Error, "test")
	if _, err := s.Power("alice", a.ID, computerules.On); err != nil {
		t.Errorf("power on once the other VM holds nothing: %v", err)
	}
}
