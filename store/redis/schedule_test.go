package redis_test

import (
	"testing"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// Three replicas fire the same slots at once: each slot fires once.
func TestScheduleFireReplicas(t *testing.T) {
	url := testURL(t)
	a := open(t, url, "")
	prefix := a.PrefixForTest()
	storetest.FireRace(t, []store.Store{a, open(t, url, prefix), open(t, url, prefix)}, storetest.Base)
}
