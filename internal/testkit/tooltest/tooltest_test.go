package tooltest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestAppendRootTest: the ordinary user's pass lists each skipped test
// once per skip, by its top-level name and package directory, whole lines
// even when many tests append at once.
func TestAppendRootTest(t *testing.T) {
	list := filepath.Join(t.TempDir(), "root-tests")
	names := []string{"TestA", "TestB/sub/case", "TestC/x"}
	var wg sync.WaitGroup
	for range 20 {
		for _, n := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := appendRootTest(list, n); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		count[line]++
	}
	var got []string
	for line, n := range count {
		if n != 20 {
			t.Errorf("%q listed %d times, want 20", line, n)
		}
		got = append(got, line)
	}
	sort.Strings(got)
	want := []string{dir + "\tTestA", dir + "\tTestB", dir + "\tTestC"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// TestAppendRootTestUnwritable: a list that cannot be written is an error,
// which NeedRoot makes the test's failure rather than a silent skip.
func TestAppendRootTestUnwritable(t *testing.T) {
	if err := appendRootTest(filepath.Join(t.TempDir(), "no", "such", "dir"), "TestA"); err == nil {
		t.Fatal("appending to a list in a missing directory succeeded")
	}
}
