package redis

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetherq/tether/store"
)

// QueueSetLimits is not there yet on this backend: its lease does not
// enforce limits, so it refuses them rather than keep limits it would not
// hold to.
func (s *Store) QueueSetLimits(context.Context, *store.QueueSetLimitsParams) (*store.Queue, error) {
	return nil, fmt.Errorf("redis: queue limits: %w", errors.ErrUnsupported)
}
