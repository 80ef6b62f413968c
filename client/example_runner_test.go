package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/tetherq/tether/client"
)

// A worker is a Runner with a Handler. Run registers it, heartbeats,
// extends each job's lease while its handler runs and settles the job by
// what the handler returns; it works until its ctx ends, then drains. A
// worker process would pass a ctx from signal.NotifyContext(ctx,
// os.Interrupt, syscall.SIGTERM); this one stops after its first job.
func ExampleRunner() {
	url, stop := tether() // the server's URL, such as http://127.0.0.1:8080
	defer stop()
	c := client.New(url)
	ctx, done := context.WithCancel(context.Background())
	if _, err := c.Enqueue(ctx, client.JobSpec{Queue: "emails", Kind: "send_email",
		Payload: json.RawMessage(`{"to":"ada@example.com"}`)}); err != nil {
		log.Fatal(err)
	}

	r := &client.Runner{
		Client:      c,
		Queues:      []string{"emails"},
		Concurrency: 8,
		Handler: func(ctx context.Context, job *client.Job) (json.RawMessage, error) {
			defer done() // this example's stop: one job is enough
			var email struct {
				To string `json:"to"`
			}
			if err := json.Unmarshal(job.Payload, &email); err != nil {
				return nil, client.Permanent(err) // no retry fixes a bad payload
			}
			fmt.Println("sending to", email.To)
			return json.RawMessage(`{"sent":true}`), nil
		},
	}
	if err := r.Run(ctx); err != nil {
		log.Fatal(err) // the server refused the token
	}
	fmt.Println("stopped")
	// Output:
	// sending to ada@example.com
	// stopped
}

// RunOnce works one job and says how it ended: handy for a cron-style
// worker and for tests.
func ExampleRunner_RunOnce() {
	url, stop := tether()
	defer stop()
	c := client.New(url)
	ctx := context.Background()
	if _, err := c.Enqueue(ctx, client.JobSpec{Queue: "thumbnails", Kind: "resize"}); err != nil {
		log.Fatal(err)
	}
	r := &client.Runner{Client: c, Queues: []string{"thumbnails"},
		Handler: func(ctx context.Context, job *client.Job) (json.RawMessage, error) {
			return nil, client.RetryIn(time.Minute, errors.New("the image store is busy"))
		}}
	out, err := r.RunOnce(ctx, time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.End, out.Job.State, out.Job.Attempt, *out.Job.LastError)
	// Output:
	// failed scheduled 1 the image store is busy
}

// Snooze gives a job back without spending an attempt, for "not now"
// rather than "failed"; Permanent sends it to dead at once; RetryIn fails
// it with the next attempt after a set delay.
func ExampleSnooze() {
	url, stop := tether()
	defer stop()
	c := client.New(url)
	ctx := context.Background()
	if _, err := c.Enqueue(ctx, client.JobSpec{Queue: "reports", Kind: "nightly"}); err != nil {
		log.Fatal(err)
	}
	r := &client.Runner{Client: c, Queues: []string{"reports"},
		Handler: func(ctx context.Context, job *client.Job) (json.RawMessage, error) {
			return nil, client.Snooze(10 * time.Minute) // the warehouse is still loading
		}}
	out, err := r.RunOnce(ctx, time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.End, out.Job.State, "attempt", out.Job.Attempt)
	// Output:
	// released scheduled attempt 0
}

// A long job reports progress and may set its lease's length; the runner
// extends the lease on its own either way.
func ExampleReportProgress() {
	url, stop := tether()
	defer stop()
	c := client.New(url)
	ctx := context.Background()
	job, err := c.Enqueue(ctx, client.JobSpec{Queue: "imports", Kind: "csv"})
	if err != nil {
		log.Fatal(err)
	}
	r := &client.Runner{Client: c, Queues: []string{"imports"},
		Handler: func(ctx context.Context, job *client.Job) (json.RawMessage, error) {
			client.ExtendLease(ctx, 10*time.Minute) // the silence the lease outlives from now on
			for part := 1; part <= 4; part++ {
				// … import a quarter of the file …
				client.ReportProgress(ctx, part*25)
			}
			return nil, nil
		}}
	if _, err := r.RunOnce(ctx, time.Second); err != nil {
		log.Fatal(err)
	}
	done, err := c.GetJob(ctx, job.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.State, *done.Progress)
	// Output:
	// succeeded 100
}
