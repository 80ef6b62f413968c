package web

import "github.com/a-h/templ"

// layout is the page around the panels: title, navigation, the flash of
// the last action, and the server's clock for the script's relative times.
type layout struct {
	Title  string
	Nav    string
	Flash  *flash
	NowMS  int64
	NodeID string
	// Version is the server's build.
	Version string
	Head    templ.Component // static part above the panels, may be nil
	Panels  []templ.Component
}

// navItem is one entry of the navigation.
type navItem struct {
	Key, Label, Href string
}

var navItems = []navItem{
	{"overview", "Overview", "/"},
	{"queues", "Queues", "/queues"},
	{"workers", "Workers", "/workers"},
	{"nodes", "Nodes", "/nodes"},
	{"orphans", "Orphans", "/orphans"},
	{"retries", "Retries", "/retries"},
	{"dead", "Dead", "/dead"},
	{"jobs", "Jobs", "/jobs"},
	{"schedules", "Schedules", "/schedules"},
}
