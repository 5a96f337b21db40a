package drain

import (
	"testing"
	"time"
)

func TestGate(t *testing.T) {
	var g Gate
	if !g.Enter() {
		t.Fatal("an open gate refused a request")
	}
	closed := make(chan struct{})
	go func() { g.Close(); close(closed) }()
	// Close waits for the admitted request, and refuses new ones meanwhile.
	deadline := time.Now().Add(5 * time.Second)
	for g.Enter() {
		g.Leave()
		if time.Now().After(deadline) {
			t.Fatal("the gate still admits requests after Close")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a request was running")
	case <-time.After(20 * time.Millisecond):
	}
	g.Leave()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return once the request left")
	}
	if g.Enter() {
		t.Fatal("a closed gate admitted a request")
	}
}
