package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/tetherq/tether/client"
)

// The worker process of TestKilledWorkerJobsSettledOnce: the test binary
// run again with these variables set (see TestMain).
const (
	workerEnvURL   = "TETHER_TEST_WORKER_URL"
	workerEnvQueue = "TETHER_TEST_WORKER_QUEUE"
	workerEnvN     = "TETHER_TEST_WORKER_N"
)

// workerMain leases n jobs, prints "job ID TOKEN" for each and then
// "holding", and heartbeats until it is killed (or for a minute at most,
// so a lost process cannot linger).
func workerMain() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := client.New(os.Getenv(workerEnvURL))
	n, _ := strconv.Atoi(os.Getenv(workerEnvN))
	const id = "w-victim"
	held := 0
	for held < n {
		jobs, err := c.Lease(ctx, client.LeaseRequest{WorkerID: id, Queues: []string{os.Getenv(workerEnvQueue)}, Max: n - held, WaitMS: 1000})
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			return 1
		}
		for _, j := range jobs {
			fmt.Printf("job %s %s\n", j.ID, j.Lease.Token)
		}
		held += len(jobs)
	}
	fmt.Println("holding")
	for ctx.Err() == nil {
		if _, err := c.Heartbeat(ctx, id, nil); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
		}
		time.Sleep(200 * time.Millisecond) // a worker's heartbeat rhythm
	}
	return 0
}
