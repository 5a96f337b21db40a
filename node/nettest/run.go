package nettest

import (
	"errors"
	"fmt"
	"os"
)

// Run runs step outside a test (a benchmark command) with a T whose fatal
// errors end the step with an error instead of a test failure, whose temp
// dirs are under one directory removed at the end, and whose cleanups (the
// clusters the step started) run when it returns.
func Run(name string, step func(t T) error) (err error) {
	dir, err := os.MkdirTemp("", "lattice-"+name+"-")
	if err != nil {
		return err
	}
	t := &runT{dir: dir}
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(fatal)
			if !ok {
				panic(p)
			}
			err = f.err
		}
		for i := len(t.cleanups) - 1; i >= 0; i-- {
			t.cleanups[i]()
		}
		os.RemoveAll(dir)
	}()
	return step(t)
}

// runT is Run's T.
type runT struct {
	dir      string
	cleanups []func()
}

type fatal struct{ err error }

func (t *runT) Helper()                           {}
func (t *runT) Logf(format string, args ...any)   {}
func (t *runT) Errorf(format string, args ...any) { panic(fatal{fmt.Errorf(format, args...)}) }
func (t *runT) Fatal(args ...any)                 { panic(fatal{errors.New(fmt.Sprint(args...))}) }
func (t *runT) Fatalf(format string, args ...any) { panic(fatal{fmt.Errorf(format, args...)}) }
func (t *runT) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }

func (t *runT) TempDir() string {
	d, err := os.MkdirTemp(t.dir, "node-")
	if err != nil {
		panic(fatal{err})
	}
	return d
}
