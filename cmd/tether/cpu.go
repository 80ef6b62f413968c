package main

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
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
