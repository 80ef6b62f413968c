package api_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// lint refuses what a strict validator (Ajv in strict mode) refuses in a
// schema though the 2020-12 meta-schema lets it through: a keyword 2020-12
// does not define (nullable, example: OpenAPI 3.0 words a 2020-12 validator
// ignores, so what they meant would silently go), an enum listing a value
// twice, a format no validator here knows, and keywords that do nothing
// without another (then or else without if, min/maxContains without
// contains). Each error names the keyword by JSON pointer.
func lint(node any, ptr string) error {
	var errs []error
	lintAt(node, ptr, &errs)
	return errors.Join(errs...)
}

// Subschema keywords of JSON Schema 2020-12, by the shape they hold.
var (
	oneSchema  = []string{"not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaList = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMap  = []string{"properties", "patternProperties", "dependentSchemas", "$defs"}
	// keywords are the other keywords of 2020-12's vocabularies.
	keywords = []string{
		"$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment",
		"type", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
		"maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
		"maxProperties", "minProperties", "required", "dependentRequired",
		"contentEncoding", "contentMediaType",
		"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
	}
	// formats are 2020-12's and the OpenAPI registry's that oasFormats checks.
	formats = []string{
		"date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
		"ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
		"json-pointer", "relative-json-pointer", "regex",
		"int32", "int64", "float", "double", "binary",
	}
)

func lintAt(node any, ptr string, errs *[]error) {
	s, ok := node.(map[string]any)
	if !ok {
		return // a boolean schema, or no schema at all: the meta-schema's to judge
	}
	bad := func(k, why string) { *errs = append(*errs, fmt.Errorf("%s/%s: %s", ptr, escape(k), why)) }
	for _, k := range sortedKeys(s) {
		at := ptr + "/" + escape(k)
		switch v := s[k]; {
		case strings.HasPrefix(k, "x-"):
		case slices.Contains(oneSchema, k):
			lintAt(v, at, errs)
		case slices.Contains(schemaList, k):
			l, _ := v.([]any)
			for i, sub := range l {
				lintAt(sub, at+"/"+strconv.Itoa(i), errs)
			}
		case slices.Contains(schemaMap, k):
			m := asMap(v)
			for _, name := range sortedKeys(m) {
				lintAt(m[name], at+"/"+escape(name), errs)
			}
		case k == "enum":
			l, _ := v.([]any)
			for i := range l {
				if slices.ContainsFunc(l[:i], func(e any) bool { return reflect.DeepEqual(e, l[i]) }) {
					bad(k, fmt.Sprintf("lists %v twice", l[i]))
				}
			}
		case k == "format":
			if f, _ := v.(string); !slices.Contains(formats, f) {
				bad(k, fmt.Sprintf("unknown format %v", v))
			}
		case !slices.Contains(keywords, k):
			bad(k, "not a JSON Schema 2020-12 keyword")
		}
	}
	for _, kw := range [][2]string{{"then", "if"}, {"else", "if"}, {"minContains", "contains"}, {"maxContains", "contains"}} {
		if _, ok := s[kw[0]]; ok && s[kw[1]] == nil {
			bad(kw[0], "does nothing without "+kw[1])
		}
	}
}
