package sqlite

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// selectJobRows scans by jobRow.fields, sqlx by the db tags: on a row with
// every column set, to distinct values where the types allow, both read
// the same, so fields lists every column in jobColumns order.
func TestJobRowFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "tether.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.UnixMilli(1_800_000_000_000)
	spec := store.JobSpec{Kind: "k", Payload: []byte(`{"p":1}`), Tags: []string{"t"}, Metadata: []byte(`{"m":1}`)}
	spec.Normalize(now)
	res, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{spec}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Jobs[0].ID
	var got, want []jobRow
	err = s.tx(ctx, func(tx *txn) (bool, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET priority = 2, attempt = 3, max_attempts = 4, timeout_ms = 5,
			backoff_base_ms = 6, backoff_max_ms = 7, run_at = 8, created_at = 9, started_at = 10, finished_at = 11,
			unique_key = 'uk', last_error = 'le', result = '{"r":1}', progress = 12, cancel_requested = 1, rescues = 13,
			dead_reason = 'dr', worker_id = 'w', token = 'tok', expires_at = 14, attempt_id = 'aid', traceparent = 'tp',
			tracestate = 'ts', ended_by = 'eb', concurrency_key = 'ck', schedule = 'sch', scheduled_for = 15
			WHERE id = ?`, id); err != nil {
			return false, err
		}
		query := `SELECT ` + jobColumns + ` FROM jobs WHERE id = ?`
		if got, err = selectJobRows(ctx, tx, 1, query, id); err != nil {
			return false, err
		}
		return false, tx.SelectContext(ctx, &want, query, id)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("selectJobRows read %+v\nsqlx read          %+v", got, want)
	}
}

func TestDecodeTags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		column string
		want   []string
	}{
		{`[]`, []string{}},
		{`["a","b"]`, []string{"a", "b"}},
		{`[ ]`, []string{}},
		{`null`, []string{}},
		{`not json`, []string{}},
		{`["a",1]`, []string{}}, // not all strings: as if none, as before
	} {
		if got := decodeTags(c.column); got == nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("decodeTags(%q) = %#v, want %#v", c.column, got, c.want)
		}
	}
}
