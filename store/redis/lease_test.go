package redis_test

import (
	"testing"

	"github.com/tetherq/tether/store/storetest"
)

func TestLeaseAcrossQueues(t *testing.T) {
	t.Parallel()
	storetest.LeaseOrderAcrossQueues(t, open(t, testURL(t), ""))
}
