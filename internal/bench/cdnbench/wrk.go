package cdnbench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// writeScript writes wrk's Lua script: each thread requests the objects
// in turn, over and over.
func writeScript(path string, objects int) error {
	var b strings.Builder
	b.WriteString("local paths = {\n")
	for i := range objects {
		fmt.Fprintf(&b, "  %q,\n", objectPath(i))
	}
	b.WriteString(`}
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format(nil, paths[i])
end
`)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// runWrk runs wrk against the server at base and reads its figures; any
// non-2xx response fails the run.
func runWrk(ctx context.Context, cfg Config, script, base string) (Result, error) {
	cmd := exec.CommandContext(ctx, cfg.Wrk, "-t", strconv.Itoa(cfg.Threads), "-c", strconv.Itoa(cfg.Connections),
		"-d", fmt.Sprintf("%ds", int(cfg.Duration.Seconds())), "--latency", "-s", script, "-H", "Host: "+Host, base+"/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return Result{}, fmt.Errorf("%w: %s", err, out)
	}
	return parseWrk(string(out))
}

var (
	rpsLine      = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)\s*$`)
	requestsLine = regexp.MustCompile(`(?m)^\s*([0-9]+) requests in `)
	p50Line      = regexp.MustCompile(`(?m)^\s+50%\s+([0-9.]+)(us|ms|s|m|h)\s*$`)
	p99Line      = regexp.MustCompile(`(?m)^\s+99%\s+([0-9.]+)(us|ms|s|m|h)\s*$`)
	non2xxLine   = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses:\s+([0-9]+)`)
	socketLine   = regexp.MustCompile(`(?m)^\s*Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)`)
)

// msPer converts wrk's time units to milliseconds.
var msPer = map[string]float64{"us": 1e-3, "ms": 1, "s": 1e3, "m": 60e3, "h": 3600e3}

// parseWrk reads the report of wrk --latency. wrk prints "Non-2xx or 3xx
// responses" for statuses from 400 up, and socket errors, only when there
// are some.
func parseWrk(out string) (Result, error) {
	rps, reqs := rpsLine.FindStringSubmatch(out), requestsLine.FindStringSubmatch(out)
	p50, p99 := p50Line.FindStringSubmatch(out), p99Line.FindStringSubmatch(out)
	if rps == nil || reqs == nil || p50 == nil || p99 == nil {
		sc := bufio.NewScanner(strings.NewReader(out))
		var last string
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				last = l
			}
		}
		return Result{}, fmt.Errorf("wrk printed no figures (last line %q)", last)
	}
	var r Result
	r.RequestsPerSec, _ = strconv.ParseFloat(rps[1], 64)
	r.Requests, _ = strconv.ParseInt(reqs[1], 10, 64)
	ms := func(m []string) float64 {
		v, _ := strconv.ParseFloat(m[1], 64)
		return v * msPer[m[2]]
	}
	r.P50ms, r.P99ms = ms(p50), ms(p99)
	if m := socketLine.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.ParseInt(s, 10, 64)
			r.SocketErrors += n
		}
	}
	if m := non2xxLine.FindStringSubmatch(out); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		if n > 0 {
			return r, fmt.Errorf("%d of %d responses were not 2xx or 3xx", n, r.Requests)
		}
	}
	return r, nil
}
