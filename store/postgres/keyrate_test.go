package postgres_test

import (
	"testing"

	"github.com/tetherq/tether/store/storetest"
)

func TestKeyPruneDropsPassedKeyRates(t *testing.T) {
	t.Parallel()
	storetest.KeyPruneDropsPassedKeyRates(t, open(t))
}
