package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The README's walkthrough is documentation users paste: every fenced sh
// block must run on its own, in a fresh shell, against a server started
// with no flags, exit 0 and print no problem+json.
func TestReadmeWalkthrough(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 3 {
		t.Fatalf("README has %d sh blocks; the walkthrough needs enqueue, lease-ack and recovery", len(blocks))
	}
	if ln, err := net.Listen("tcp", "127.0.0.1:8080"); err != nil {
		t.Fatalf("the walkthrough talks to 127.0.0.1:8080, which is taken: %v", err)
	} else {
		ln.Close()
	}
	startProcess(t, t.TempDir()) // no flags: 127.0.0.1:8080, ./tether.db
	for i, b := range blocks {
		script := b[1]
		cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", script)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("block %d failed: %v\n%s\n--- output:\n%s", i+1, err, script, out)
			continue
		}
		if strings.Contains(string(out), "urn:tether:error") {
			t.Errorf("block %d printed a problem:\n%s", i+1, out)
		}
		if len(strings.TrimSpace(string(out))) == 0 {
			t.Errorf("block %d printed nothing", i+1)
		}
		t.Logf("block %d:\n%s", i+1, out)
	}
	// The walkthrough cleans up after itself: every job it made is finished.
	resp, err := http.Get("http://127.0.0.1:8080/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var stats struct {
		Jobs map[string]int `json:"jobs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	if n := stats.Jobs["scheduled"] + stats.Jobs["available"] + stats.Jobs["running"]; n != 0 || stats.Jobs["succeeded"] == 0 {
		t.Errorf("after the walkthrough the jobs are %v: want every one finished, none left waiting or running", stats.Jobs)
	}
}
