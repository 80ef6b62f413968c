package api

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// The fuzz targets run the request decoders on arbitrary bytes (enqueue's
// is FuzzDecodeSpec, beside decodeStrict's tests). A decoder
// may refuse anything, but only as a 400 naming a field (never a panic, an
// internal error or a silently accepted value out of API.md's ranges).
// Seeds are in testdata/fuzz.

var fuzzNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// mustBeFieldError fails unless err is nil or a request error.
func mustBeFieldError(t *testing.T, err error) {
	t.Helper()
	var fe *fieldError
	if err != nil && !errors.As(err, &fe) {
		t.Fatalf("error %T %v is no *fieldError: it would answer 500", err, err)
	}
}

func FuzzBatch(f *testing.F) {
	f.Add([]byte(`{"jobs":[{"kind":"a"},{"kind":"b","tags":["x"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var req batchRequest
		err := decodeStrict(data, &req, "")
		if err == nil {
			err = req.check()
		}
		for i := 0; err == nil && i < len(req.Jobs); i++ {
			_, err = decodeSpec(req.Jobs[i], fmt.Sprintf("jobs[%d].", i), fuzzNow, nil)
		}
		mustBeFieldError(t, err)
		if err == nil && (len(req.Jobs) < 1 || len(req.Jobs) > maxItems) {
			t.Fatalf("accepted %d jobs", len(req.Jobs))
		}
	})
}

func FuzzLease(f *testing.F) {
	f.Add([]byte(`{"worker_id":"10.0.0.5:8080/w-1","queues":["q"],"max":10,"wait_ms":5000,"kinds":["k"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var req leaseRequest
		err := decodeStrict(data, &req, "")
		if err == nil {
			err = req.check()
		}
		mustBeFieldError(t, err)
		if err != nil {
			return
		}
		if req.WorkerID == nil || checkWorkerID("", *req.WorkerID) != nil || len(req.Queues) == 0 ||
			(req.Max != nil && (*req.Max < 1 || *req.Max > maxLeaseMax)) ||
			(req.WaitMS != nil && (*req.WaitMS < 0 || *req.WaitMS > maxWaitMS)) {
			t.Fatalf("accepted %+v", req)
		}
	})
}

func FuzzSettle(f *testing.F) {
	f.Add([]byte(`{"acks":[{"id":"j1","token":"t1","result":{"ok":true}}],"fails":[{"id":"j2","token":"t2","error":"boom","retry":false}]}`))
	f.Add([]byte(`{"acks":[{"id":"j1","token":"t1"}, {"token":"t2","id":"j2"}]}`))
	f.Add([]byte(` { "acks" : [ { "id" : "" , "token" : "t" } ] } `))
	f.Add([]byte(`{"acks":[{"id":"j1","id":"j2","token":"t1"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The fast path for plain acks must agree with the general one.
		fp, fids, fast := parseAcks(data)
		var req settleRequest
		err := decodeStrict(data, &req, "")
		if err == nil {
			err = req.check()
		}
		var p *store.JobSettleParams
		var ids []string
		if err == nil {
			p, ids, err = req.params()
		}
		mustBeFieldError(t, err)
		if fast && (err != nil || !reflect.DeepEqual(fp, p) || !slices.Equal(fids, ids)) {
			t.Fatalf("parseAcks and encoding/json disagree on %q:\n%+v %q\n%+v %q %v", data, fp, fids, p, ids, err)
		}
		if err != nil {
			return
		}
		if len(ids) != len(p.Acks)+len(p.Fails) || len(ids) < 1 || len(ids) > maxItems {
			t.Fatalf("%d ids for %d acks and %d fails", len(ids), len(p.Acks), len(p.Fails))
		}
		for _, a := range p.Acks {
			if a.Token == "" {
				t.Fatalf("accepted an ack without a token: %+v", a)
			}
		}
	})
}
