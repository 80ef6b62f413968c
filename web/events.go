package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// events streams change notifications as Server-Sent Events:
//
//	event: change
//	data: jobs workers
//
// one per poll at most, naming the topics that changed, and a comment line
// every PingInterval. It ends when the client goes or shutdown begins.
func (d *dash) events(w http.ResponseWriter, r *http.Request) {
	select {
	case <-d.cfg.Shutdown:
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	default:
	}
	rc := http.NewResponseController(w)
	// The stream lives as long as the page: the server's write timeout and
	// the body deadline of the server's edge, meant for ordinary requests,
	// must not cut it (a passed read deadline ends the request's context).
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies must not hold events back
	w.WriteHeader(http.StatusOK)
	// A reconnecting browser waits 2 s instead of its default 3 s.
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil || rc.Flush() != nil {
		return
	}
	s := d.feed.subscribe()
	defer d.feed.unsubscribe(s)
	ping := time.NewTicker(d.cfg.PingInterval)
	defer ping.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-d.cfg.Shutdown:
			return
		case <-s.ready:
			topics := s.take()
			if len(topics) == 0 {
				continue
			}
			_, err = fmt.Fprintf(w, "event: change\ndata: %s\n\n", strings.Join(topics, " "))
		case <-ping.C:
			_, err = fmt.Fprint(w, ": ping\n\n")
		}
		if err != nil || rc.Flush() != nil {
			return
		}
	}
}

// snapshot reads the aggregates the poller compares: queue counts and
// paused flags, the rescue total, each worker's liveness and jobs held,
// each node's liveness, and each schedule's version (every write, pause,
// resume and fire bumps it).
func (d *dash) snapshot(ctx context.Context) (snapshot, error) {
	now := d.now()
	queues, err := d.store.QueueList(ctx, &store.QueueListParams{Now: now})
	if err != nil {
		return nil, err
	}
	stats, err := d.store.StatsGet(ctx, &store.StatsGetParams{Now: now})
	if err != nil {
		return nil, err
	}
	workers, err := d.store.WorkerList(ctx, &store.WorkerListParams{})
	if err != nil {
		return nil, err
	}
	nodes, err := d.store.NodeList(ctx, &store.NodeListParams{})
	if err != nil {
		return nil, err
	}
	schedules, err := d.store.ScheduleList(ctx, &store.ScheduleListParams{})
	if err != nil {
		return nil, err
	}
	var jobs, qs, ws []string
	jobs = append(jobs, strconv.FormatInt(stats.RescuesTotal, 10))
	for _, q := range queues {
		qs = append(qs, q.Name+"="+strconv.FormatBool(q.Paused))
		jobs = append(jobs, q.Name, strconv.FormatInt(q.Retrying, 10))
		for _, st := range store.States {
			jobs = append(jobs, strconv.FormatInt(q.Counts[st], 10))
		}
	}
	for _, w := range workers {
		held := slices.Clone(w.InFlight)
		slices.Sort(held)
		ws = append(ws, w.ID, string(d.workerState(w.LastHeartbeatAt, now)), strings.Join(held, ","))
	}
	ns := []string{strconv.FormatInt(stats.RescuesTotal, 10)}
	live := store.LiveNodeIDs(nodes, d.cfg.NodeID, now, d.cfg.DeadAfter)
	for _, n := range nodes {
		ns = append(ns, n.ID, strconv.FormatBool(slices.Contains(live, n.ID)))
	}
	var ss []string
	for _, s := range schedules {
		ss = append(ss, s.Name, strconv.FormatInt(s.Version, 10))
	}
	return snapshot{topicJobs: fingerprint(jobs), topicNodes: fingerprint(ns), topicQueues: fingerprint(qs),
		topicSchedules: fingerprint(ss), topicWorkers: fingerprint(ws)}, nil
}
