package redis

// SubscribedForTest reports whether the wake-up subscription is up.
func (s *Store) SubscribedForTest() bool { return s.sub.connected.Load() }

// PrefixForTest is the store's key prefix.
func (s *Store) PrefixForTest() string { return s.prefix }

// InsightsBatch bounds the index entries one list call examines.
const InsightsBatch = insightsBatch

// ReindexBatch is how many entries one step of the retry sets' build checks.
const ReindexBatch = reindexBatch
