package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v4"
)

// contract is openapi.yaml as a standard JSON Schema 2020-12 validator reads
// it: every schema of the document (components' and those inline in paths)
// compiled once, strictly, and kept by its JSON pointer. The API tests check
// bodies with it. kin-openapi still routes and checks parameters, headers
// and statuses, but it cannot judge a 3.1 body: when its 2020-12 compiler
// fails, or the schema holds a $ref (every job does), it falls back without
// a word to its OpenAPI 3.0 rules, where {} refuses null.
type contract struct {
	doc     map[string]any
	schemas map[string]*jsonschema.Schema // by JSON pointer: "/components/schemas/Job"
}

// contractURL names the document inside the compiler; nothing is fetched.
const contractURL = "file:///openapi.yaml"

// dialect is the one the document must declare: plain JSON Schema 2020-12,
// so no OpenAPI-only keyword (nullable, example, discriminator) is allowed.
const dialect = "https://json-schema.org/draft/2020-12/schema"

// compileContract compiles every schema of the OpenAPI 3.1 document src. The
// error names each schema that does not compile (by JSON pointer) and why:
// what the 2020-12 meta-schema or $ref resolution refuses, and what a strict
// validator such as Ajv's strict mode refuses besides (lint).
func compileContract(src []byte) (*contract, error) {
	doc, err := decodeYAML(src)
	if err != nil {
		return nil, err
	}
	if doc["openapi"] != "3.1.0" || doc["jsonSchemaDialect"] != dialect {
		return nil, fmt.Errorf("want openapi 3.1.0 with jsonSchemaDialect %s, have %v and %v", dialect, doc["openapi"], doc["jsonSchemaDialect"])
	}
	sites, err := schemaSites(doc)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for _, f := range oasFormats {
		c.RegisterFormat(f)
	}
	if err := c.AddResource(contractURL, doc); err != nil {
		return nil, err
	}
	k := &contract{doc: doc, schemas: map[string]*jsonschema.Schema{}}
	var errs []error
	for _, ptr := range sites {
		node, _ := lookup(doc, ptr)
		if err := lint(node, ptr); err != nil {
			errs = append(errs, err)
			continue
		}
		s, err := c.Compile(contractURL + "#" + fragment(ptr))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ptr, err))
			continue
		}
		k.schemas[ptr] = s
	}
	return k, errors.Join(errs...)
}

// decodeYAML reads a YAML document as the JSON values a validator sees
// (json.Number for numbers, string keys only).
func decodeYAML(src []byte) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not JSON-compatible: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("not a mapping")
	}
	return m, nil
}

// escape makes s one JSON pointer token.
func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

func unescape(s string) string { return strings.NewReplacer("~1", "/", "~0", "~").Replace(s) }

// fragment is ptr as a URL fragment.
func fragment(ptr string) string {
	var b strings.Builder
	for tok := range strings.SplitSeq(ptr, "/") {
		if tok != "" {
			b.WriteString("/" + url.PathEscape(tok))
		}
	}
	return b.String()
}

// lookup follows ptr from doc.
func lookup(doc any, ptr string) (any, bool) {
	v := doc
	for _, tok := range strings.Split(ptr, "/")[1:] {
		switch n := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = n[unescape(tok)]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil, false
			}
			v = n[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// deref follows a Reference Object ({"$ref": "#/components/..."}) to its
// target's pointer; any other node is its own.
func (k *contract) deref(ptr string) (string, map[string]any) {
	for range 10 {
		node, _ := lookup(k.doc, ptr)
		m, _ := node.(map[string]any)
		ref, ok := m["$ref"].(string)
		if !ok {
			return ptr, m
		}
		ptr = strings.TrimPrefix(ref, "#")
	}
	return ptr, nil
}

// oasFormats are the OpenAPI format registry's numeric formats: a value out
// of range breaks its schema, as kin-openapi checks too.
var oasFormats = []*jsonschema.Format{
	{Name: "int32", Validate: intRange(math.MinInt32, math.MaxInt32)},
	{Name: "int64", Validate: intRange(math.MinInt64, math.MaxInt64)},
	{Name: "float", Validate: func(any) error { return nil }},
	{Name: "double", Validate: func(any) error { return nil }},
	{Name: "binary", Validate: func(any) error { return nil }},
}

func intRange(lo, hi int64) func(any) error {
	return func(v any) error {
		n, ok := v.(json.Number)
		if !ok {
			return nil
		}
		// Whether it is an integer at all is the type keyword's to say.
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if errors.Is(err, strconv.ErrRange) || err == nil && (i < lo || i > hi) {
			return fmt.Errorf("%s is not within %d..%d", n, lo, hi)
		}
		return nil
	}
}

// sortedKeys lists m's keys in order, so errors come in a stable order.
func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
