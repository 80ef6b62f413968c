package api

import (
	"errors"
	"testing"

	"github.com/tetherq/tether/store"
)

// FuzzDecodeScheduleSpec: any body is refused with a field error or
// accepted as a spec that is in range, fires (its next slot after now
// exists, after now) and hashes the same when decoded again.
func FuzzDecodeScheduleSpec(f *testing.F) {
	for _, s := range []string{
		`{"cron":"0 2 * * *","timezone":"America/New_York","job":{"kind":"k"}}`,
		`{"cron":"*/5 * * * * *","job":{"kind":"k","queue":"q","payload":{"a":1}}}`,
		`{"every_ms":1000,"catchup":"all","max_catchup":3,"overlap":"skip","jitter_ms":500,"job":{"kind":"k"}}`,
		`{"cron":"0 0 30 2 *","job":{"kind":"k"}}`, `{"cron":"@every 1h","job":{"kind":"k"}}`,
		`{"cron":"30 1 * * *","timezone":"Australia/Sydney","paused":true,"job":{"kind":"k","tags":["t"]}}`,
		`{"name":"s","every_ms":null,"cron":"1-5/2 * * JAN-MAR MON","job":{"kind":"k"}}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := decodeScheduleSpec(data, "", "s")
		var fe *fieldError
		if err != nil {
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is no fieldError", err)
			}
			return
		}
		if (spec.Cron == "") == (spec.Every == 0) || spec.Name != "s" || !store.ValidName(spec.Job.Kind) ||
			spec.MaxCatchup < 1 || spec.MaxCatchup > maxMaxCatchup || spec.CatchupWindow <= 0 ||
			spec.Jitter < 0 || spec.Jitter > millis(maxJitterMS) || spec.Timezone == "" {
			t.Fatalf("accepted spec out of range: %+v", spec)
		}
		if next := spec.Next(testNow); !next.After(testNow) {
			t.Fatalf("accepted spec %q never fires after %s (next %s)", spec.Cron, testNow, next)
		}
		again, err := decodeScheduleSpec(data, "", "s")
		if err != nil || again.Hash() != spec.Hash() {
			t.Fatalf("decoded again: %v, hash %s then %s", err, spec.Hash(), again.Hash())
		}
	})
}
