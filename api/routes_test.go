package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// TestRoutesMatchSpec: the router serves exactly the operations of
// openapi.yaml.
func TestRoutesMatchSpec(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var served []string
	err := chi.Walk(e.handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		served = append(served, method+" "+strings.TrimSuffix(route, "/"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	slices.Sort(served)
	slices.Sort(documented)
	if !slices.Equal(served, documented) {
		t.Errorf("routes differ from openapi.yaml\nserved:     %v\ndocumented: %v", served, documented)
	}
}
