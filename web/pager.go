package web

import "net/url"

// A list pages forward by an opaque cursor, which the store can only follow
// forward. To offer the way back, each page's URL carries the cursors of
// the pages before it (prev, repeated; the first page has none), at most
// maxTrail of them: a page deeper than that keeps the newest and says so
// (deep=1), and offers the first page where it no longer knows the one
// before.
const maxTrail = 20

// pages are the links of a paged list; "" where there is none.
type pages struct {
	Prev, Next, First string
	// N is the page's number, 0 when too deep to know.
	N int
}

// trail is where the request is in its list.
type trail struct {
	cursor string
	prev   []string
	deep   bool
}

func trailOf(rq *request) trail {
	q := rq.r.URL.Query()
	return trail{cursor: q.Get("cursor"), prev: q["prev"], deep: q.Get("deep") == "1"}
}

// links returns the page links of a list at path with the filter's values,
// where the store gave next as the cursor after this page ("" at the end).
func (t trail) links(path string, filter url.Values, next string) pages {
	var p pages
	if !t.deep {
		p.N = len(t.prev) + 1
		if t.cursor != "" {
			p.N++
		}
	}
	if next != "" {
		prev := t.prev
		if t.cursor != "" {
			prev = append(prev[:len(prev):len(prev)], t.cursor)
		}
		deep := t.deep
		if len(prev) > maxTrail {
			prev, deep = prev[len(prev)-maxTrail:], true
		}
		p.Next = pageURL(path, filter, next, prev, deep)
	}
	if t.cursor == "" {
		return p
	}
	switch n := len(t.prev); {
	case n > 0:
		p.Prev = pageURL(path, filter, t.prev[n-1], t.prev[:n-1], t.deep)
	case !t.deep:
		p.Prev = pageURL(path, filter, "", nil, false)
	}
	if p.Prev == "" || len(t.prev) > 0 {
		p.First = pageURL(path, filter, "", nil, false)
	}
	return p
}

func pageURL(path string, filter url.Values, cursor string, prev []string, deep bool) string {
	q := url.Values{}
	for k, vs := range filter {
		for _, v := range vs {
			if v != "" {
				q.Add(k, v)
			}
		}
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if len(prev) > 0 {
		q["prev"] = prev
	}
	if deep {
		q.Set("deep", "1")
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
