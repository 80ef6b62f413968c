package api_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// schemaSites lists the JSON pointer of every schema in an OpenAPI 3.1
// document: components' schemas, and the schemas of parameters, headers,
// request bodies and responses in components and in paths. A Reference
// Object is skipped (its target is listed where it lives). A place that
// can hold schemas this walk does not read (callbacks, webhooks) is an
// error rather than a silent gap.
func schemaSites(doc map[string]any) ([]string, error) {
	w := &siteWalk{}
	if _, ok := doc["webhooks"]; ok {
		w.fail("/webhooks", "not read by this walk")
	}
	comps, _ := doc["components"].(map[string]any)
	for _, kind := range sortedKeys(comps) {
		ptr, group := "/components/"+kind, asMap(comps[kind])
		for _, name := range sortedKeys(group) {
			at := ptr + "/" + escape(name)
			switch kind {
			case "schemas":
				w.sites = append(w.sites, at)
			case "parameters", "headers":
				w.param(at, group[name])
			case "responses":
				w.response(at, group[name])
			case "requestBodies":
				w.content(at, group[name])
			case "securitySchemes", "examples", "links":
			default:
				w.fail(at, "not read by this walk")
			}
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, p := range sortedKeys(paths) {
		w.pathItem("/paths/"+escape(p), asMap(paths[p]))
	}
	return w.sites, errors.Join(w.errs...)
}

type siteWalk struct {
	sites []string
	errs  []error
}

func (w *siteWalk) fail(ptr, why string) { w.errs = append(w.errs, fmt.Errorf("%s: %s", ptr, why)) }

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func (w *siteWalk) pathItem(ptr string, item map[string]any) {
	for _, k := range sortedKeys(item) {
		switch {
		case k == "parameters":
			w.params(ptr+"/parameters", item[k])
		case slices.Contains(methods, k):
			w.operation(ptr+"/"+k, asMap(item[k]))
		case k != "summary" && k != "description" && k != "servers":
			w.fail(ptr+"/"+escape(k), "not read by this walk")
		}
	}
}

func (w *siteWalk) operation(ptr string, op map[string]any) {
	if _, ok := op["callbacks"]; ok {
		w.fail(ptr+"/callbacks", "not read by this walk")
	}
	w.params(ptr+"/parameters", op["parameters"])
	if body, ok := op["requestBody"]; ok {
		w.content(ptr+"/requestBody", body)
	}
	responses := asMap(op["responses"])
	for _, status := range sortedKeys(responses) {
		w.response(ptr+"/responses/"+escape(status), responses[status])
	}
}

func (w *siteWalk) params(ptr string, list any) {
	l, _ := list.([]any)
	for i, p := range l {
		w.param(ptr+"/"+strconv.Itoa(i), p)
	}
}

// param reads a Parameter or Header Object: a schema, or a content map.
func (w *siteWalk) param(ptr string, node any) {
	m := asMap(node)
	if _, ok := m["$ref"]; ok {
		return
	}
	if _, ok := m["schema"]; ok {
		w.sites = append(w.sites, ptr+"/schema")
	}
	w.content(ptr, m)
}

func (w *siteWalk) response(ptr string, node any) {
	m := asMap(node)
	if _, ok := m["$ref"]; ok {
		return
	}
	w.content(ptr, m)
	headers := asMap(m["headers"])
	for _, h := range sortedKeys(headers) {
		w.param(ptr+"/headers/"+escape(h), headers[h])
	}
}

// content reads the media types of a request body, response or parameter.
func (w *siteWalk) content(ptr string, node any) {
	m := asMap(node)
	if _, ok := m["$ref"]; ok {
		return
	}
	content := asMap(m["content"])
	for _, mt := range sortedKeys(content) {
		if _, ok := asMap(content[mt])["schema"]; ok {
			w.sites = append(w.sites, ptr+"/content/"+escape(mt)+"/schema")
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
