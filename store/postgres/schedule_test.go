package postgres_test

import (
	"testing"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// Three replicas fire the same slots at once: each slot fires once.
func TestScheduleFireReplicas(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 3)
	storetest.FireRace(t, []store.Store{rs[0], rs[1], rs[2]}, storetest.Base)
}
