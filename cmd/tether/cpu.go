package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// serverCPU reads the server's process_cpu_seconds_total from its
// /metrics. ok is false when the server does not report it (a server
// embedded in a test) or refuses the request.
func serverCPU(ctx context.Context, hc *http.Client, url, token string) (seconds float64, ok bool) {
	return serverMetric(ctx, hc, url, token, "process_cpu_seconds_total")
}

// serverMetric reads the value of an unlabelled metric from the server's
// /metrics; ok is false when it is missing or the request fails.
func serverMetric(ctx context.Context, hc *http.Client, url, token, name string) (float64, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return 0, false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, found := strings.CutPrefix(sc.Text(), name+" "); found {
			s, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return s, err == nil
		}
	}
	return 0, false
}

// cpuMeter measures the CPU per job of a phase, ours and the server's
// (when its /metrics reports it): a figure less at the mercy of a busy
// machine than the rate.
type cpuMeter struct {
	ctx        context.Context
	hc         *http.Client
	url, token string
	jobs       int
	proc       string // also measure this machine's processes of this name ("" for none)

	server, client, procs      float64 // seconds at start
	serverOK, clientOK, procOK bool
}

// start begins a phase.
func (m *cpuMeter) start() {
	m.server, m.serverOK = serverCPU(m.ctx, m.hc, m.url, m.token)
	var d time.Duration
	d, m.clientOK = ownCPU()
	m.client = d.Seconds()
	if m.proc != "" {
		d, m.procOK = procCPU(m.proc)
		m.procs = d.Seconds()
	}
}

// String ends the phase: "cpu/job client=12us server=20us" (and
// "postgres=40us" when proc is "postgres"), n/a for a figure not known.
func (m *cpuMeter) String() string {
	clientAfter, _ := ownCPU()
	serverAfter, serverAfterOK := serverCPU(m.ctx, m.hc, m.url, m.token)
	perJob := func(ok bool, seconds float64) string {
		if !ok {
			return "n/a"
		}
		return fmt.Sprintf("%.0fus", seconds*1e6/float64(m.jobs))
	}
	line := fmt.Sprintf("cpu/job client=%s server=%s", perJob(m.clientOK, clientAfter.Seconds()-m.client),
		perJob(m.serverOK && serverAfterOK, serverAfter-m.server))
	if m.proc != "" {
		procsAfter, ok := procCPU(m.proc)
		line += fmt.Sprintf(" %s=%s", m.proc, perJob(m.procOK && ok, procsAfter.Seconds()-m.procs))
	}
	return line
}
