package s3bench

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux architecture Go runs on.
const clockTicks = 100

// cpuSample is the CPU time used so far by the machine's processes (busy:
// user, nice and system time of all CPUs, which leaves out interrupts,
// that processes are not charged for either) and by the processes
// measured (ours: this process, which holds the client and an in-process
// server, and the server processes given), in seconds.
type cpuSample struct{ busy, ours float64 }

func sampleCPU(pids []int) cpuSample {
	var s cpuSample
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		// cpu  user nice system idle iowait irq softirq steal ...
		line, _, _ := bytes.Cut(b, []byte("\n"))
		f := bytes.Fields(line)
		for _, idx := range []int{1, 2, 3} { // user nice system
			if idx < len(f) {
				v, _ := strconv.ParseFloat(string(f[idx]), 64)
				s.busy += v / clockTicks
			}
		}
	}
	s.ours = procCPU("self")
	for _, pid := range pids {
		s.ours += procCPU(strconv.Itoa(pid))
	}
	return s
}

// procCPU is the user and system time of a process, all its threads.
func procCPU(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing one. utime and stime are fields 14, 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(string(f[11]), 64)
	st, _ := strconv.ParseFloat(string(f[12]), 64)
	return (u + st) / clockTicks
}

// syncDisks writes every dirty page of the machine to disk, so that a
// phase does not pay for writes left by the one before it or by other
// processes (MinIO's sync(2) after each object would).
func syncDisks() { syscall.Sync() }
