package web

import (
	"fmt"
	"net/url"
	"testing"
)

// Following next links from the first page and then previous links back
// visits the same pages in reverse, however deep; past maxTrail pages the
// way back ends at a page that offers the first one instead.
func TestTrailLinks(t *testing.T) {
	t.Parallel()
	filter := url.Values{"queue": {"q"}, "kind": {""}}
	at := func(link string) trail {
		u, err := url.Parse(link)
		if err != nil || u.Path != "/jobs" || u.Query().Get("queue") != "q" || u.Query().Has("kind") {
			t.Fatalf("link %q", link)
		}
		q := u.Query()
		return trail{cursor: q.Get("cursor"), prev: q["prev"], deep: q.Get("deep") == "1"}
	}
	const depth = maxTrail + 5
	tr := trail{}
	var visited []string // the cursor of each page
	for i := range depth {
		visited = append(visited, tr.cursor)
		p := tr.links("/jobs", filter, fmt.Sprintf("c%d", i+1))
		if i < maxTrail && p.N != i+1 {
			t.Errorf("page %d numbered %d", i+1, p.N)
		}
		if i > 0 && p.Prev == "" && p.First == "" {
			t.Fatalf("page %d offers no way back", i+1)
		}
		tr = at(p.Next)
	}
	if !tr.deep || len(tr.prev) != maxTrail || tr.cursor != fmt.Sprintf("c%d", depth) {
		t.Fatalf("after %d pages: %+v", depth, tr)
	}
	if p := tr.links("/jobs", filter, ""); p.Next != "" || p.N != 0 || p.First == "" {
		t.Errorf("last page: %+v", p)
	}
	// Back as far as the trail goes.
	for i := depth - 1; ; i-- {
		p := tr.links("/jobs", filter, "next")
		if p.Prev == "" {
			if at(p.First).cursor != "" || i <= 0 {
				t.Errorf("at page %d the way back ends without the first page", i+1)
			}
			if got := depth - i; got < maxTrail {
				t.Errorf("went back %d pages, want at least %d", got, maxTrail)
			}
			break
		}
		tr = at(p.Prev)
		if tr.cursor != visited[i] {
			t.Fatalf("previous of page %d has cursor %q, want %q", i+2, tr.cursor, visited[i])
		}
	}
	// On a short trail the way back reaches page 1, which has no cursor.
	p := trail{cursor: "c1"}.links("/jobs", filter, "c2")
	if first := at(p.Prev); first.cursor != "" || len(first.prev) != 0 || p.First != "" || p.N != 2 {
		t.Errorf("page 2: %+v", p)
	}
}
