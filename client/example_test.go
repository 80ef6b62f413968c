package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/client"
	"github.com/tetherq/tether/store/sqlite"
)

// A producer enqueues a job; a worker leases it, long-polling up to a
// second, and acks it with its lease's token.
func Example() {
	url, stop := tether() // the server's URL, such as http://127.0.0.1:8080
	defer stop()
	ctx := context.Background()
	c := client.New(url)
	// c.Token = os.Getenv("TETHER_TOKEN") when the server has tokens.

	job, err := c.Enqueue(ctx, client.JobSpec{
		Queue: "emails", Kind: "send_email", Payload: json.RawMessage(`{"to":"ada@example.com"}`),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("enqueued", job.Kind, job.State)

	jobs, err := c.Lease(ctx, client.LeaseRequest{WorkerID: "w-1", Queues: []string{"emails"}, Max: 10, WaitMS: 1000})
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range jobs {
		// The work goes here; a job that takes longer than its timeout_ms
		// calls c.Extend, and a worker heartbeats with c.Heartbeat.
		done, err := c.Ack(ctx, j.ID, j.Lease.Token, json.RawMessage(`{"sent":true}`))
		if err != nil {
			log.Fatal(err) // errors.Is(err, client.ErrLeaseLost): the job was taken from us
		}
		fmt.Println("acked", string(j.Payload), done.State, string(done.Result))
	}
	// Output:
	// enqueued send_email available
	// acked {"to":"ada@example.com"} succeeded {"sent":true}
}

// tether serves the API over a SQLite file in a temporary directory.
func tether() (string, func()) {
	dir, err := os.MkdirTemp("", "tether-example")
	if err != nil {
		log.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "tether.db"))
	if err != nil {
		log.Fatal(err)
	}
	a, err := api.New(api.Config{Store: st})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	return srv.URL, func() {
		srv.Close()
		st.Close()
		os.RemoveAll(dir)
	}
}
