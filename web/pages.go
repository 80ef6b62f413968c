package web

// pages lists the dashboard's pages and their panels. Each panel's topics
// say which changes refresh it (see feed).
func (d *dash) pages() []page {
	queues := panel{"queues", "jobs queues", d.queuesPanel}
	return []page{
		{path: "/", title: "Overview", nav: "overview", panels: []panel{
			{"overview", "jobs workers", d.overviewPanel},
			{"throughput", "jobs", d.throughputPanel},
			queues,
		}},
		{path: "/queues", title: "Queues", nav: "queues", panels: []panel{queues}},
		{path: "/queues/{name}", title: "Queue", nav: "queues", panels: []panel{
			{"queue", "jobs queues", d.queuePanel},
			{"queue-depth", "jobs", d.queueDepthPanel},
			{"queue-flow", "jobs", d.queueFlowPanel},
			{"queue-jobs", "jobs", d.queueJobsPanel},
		}},
		{path: "/workers", title: "Workers", nav: "workers", panels: []panel{
			{"workers", "workers", d.workersPanel},
		}},
		{path: "/nodes", title: "Nodes", nav: "nodes", panels: []panel{
			{"nodes", "nodes", d.nodesPanel},
		}},
		{path: "/orphans", title: "Orphans and rescues", nav: "orphans", panels: []panel{
			{"held", "workers jobs", d.heldPanel},
			{"rescues", "jobs", d.rescuesPanel},
		}},
		{path: "/retries", title: "Retries", nav: "retries", head: d.queueFilterHead("/retries"), panels: []panel{
			{"retries", "jobs", d.retriesPanel},
		}},
		{path: "/dead", title: "Dead jobs", nav: "dead", head: d.deadHead, panels: []panel{
			{"dead", "jobs", d.deadPanel},
		}},
		{path: "/schedules", title: "Schedules", nav: "schedules", panels: []panel{
			{"schedules", "jobs schedules", d.schedulesPanel},
		}},
		{path: "/schedules/{name}", title: "Schedule", nav: "schedules", panels: []panel{
			{"schedule", "jobs schedules", d.schedulePanel},
		}},
		{path: "/jobs", title: "Jobs", nav: "jobs", head: d.jobsHead, panels: []panel{
			{"jobs", "jobs", d.jobsPanel},
		}},
		{path: "/jobs/{id}", title: "Job", nav: "jobs", panels: []panel{
			{"job", "jobs workers", d.jobPanel},
		}},
	}
}
