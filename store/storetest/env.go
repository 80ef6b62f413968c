package storetest

import (
	"os"
	"testing"
)

// Unavailable stops a test that lacks what it needs (missing, with how to
// get it): a skip on a developer's machine, a failure on CI (CI=true),
// where every backend must be tested.
func Unavailable(t testing.TB, missing, how string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: on CI every backend must be tested (%s)", missing, how)
	}
	t.Skipf("%s (%s)", missing, how)
}

// EnvURL is the URL of a test server that env names, as scripts such as
// scripts/postgres.sh export it; without it the test stops by Unavailable.
func EnvURL(t testing.TB, env, script string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		Unavailable(t, env+" is not set", `eval "$(`+script+`)" sets it; make test runs it`)
	}
	return v
}
