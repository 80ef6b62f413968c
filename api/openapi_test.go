package api_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tetherq/tether"
)

// Every schema of openapi.yaml, in components and inline in paths, must
// compile in a strict standard JSON Schema 2020-12 validator: tools made
// from the spec (mock servers, client generators) read it that way, and
// one that skips a schema it cannot compile checks nothing there.
func TestOpenAPISchemasCompile(t *testing.T) {
	t.Parallel()
	k, err := compileContract(tether.OpenAPI)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			t.Error(line)
		}
		return
	}
	sites, err := schemaSites(k.doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"/components/schemas/Job",
		"/paths/~1v1~1lease/post/requestBody/content/application~1json/schema",
		"/paths/~1v1~1jobs/get/parameters/1/schema",
		"/components/responses/RateLimited/headers/Retry-After/schema",
	} {
		if !slices.Contains(sites, want) {
			t.Errorf("schema %s not among the %d compiled", want, len(sites))
		}
	}
	if len(k.schemas) != len(sites) {
		t.Errorf("compiled %d of %d schemas", len(k.schemas), len(sites))
	}
	t.Logf("%d schemas compiled", len(sites))
}

// contractDoc is a small OpenAPI 3.1 document with a schema in each place
// one can be: components, a path parameter, a request body, a response
// body and header, a response by reference.
const contractDoc = `
openapi: 3.1.0
jsonSchemaDialect: https://json-schema.org/draft/2020-12/schema
info: { title: t, version: "1" }
paths:
  /things/{id}:
    parameters:
      - { name: id, in: path, required: true, schema: { type: string } }
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema: { type: object, required: [n], properties: { n: { type: integer }, note: {} } }
      responses:
        "200":
          description: ok
          headers:
            X-N: { schema: { type: integer } }
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Thing" }
        "204": { description: none }
        "404": { $ref: "#/components/responses/NotFound" }
components:
  schemas:
    Thing:
      type: object
      required: [when]
      properties:
        when: { anyOf: [{ $ref: "#/components/schemas/Time" }, { type: "null" }] }
    Time: { type: string, format: date-time }
  responses:
    NotFound:
      description: nf
      content:
        application/problem+json:
          schema: { type: object }
`

func TestSchemaSites(t *testing.T) {
	t.Parallel()
	k, err := compileContract([]byte(contractDoc))
	if err != nil {
		t.Fatal(err)
	}
	sites, err := schemaSites(k.doc)
	want := []string{
		"/components/responses/NotFound/content/application~1problem+json/schema",
		"/components/schemas/Thing",
		"/components/schemas/Time",
		"/paths/~1things~1{id}/parameters/0/schema",
		"/paths/~1things~1{id}/post/requestBody/content/application~1json/schema",
		"/paths/~1things~1{id}/post/responses/200/content/application~1json/schema",
		"/paths/~1things~1{id}/post/responses/200/headers/X-N/schema",
	}
	if err != nil || !slices.Equal(sites, want) {
		t.Errorf("sites %q, %v\nwant %q", sites, err, want)
	}
}

// Each defect a strict validator refuses fails the compile, naming where.
func TestContractRefusesBrokenSchemas(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, old, new string
		want           string // in the error
	}{
		{"nullable (OpenAPI 3.0)", "n: { type: integer }", "n: { type: integer, nullable: true }",
			"/paths/~1things~1{id}/post/requestBody/content/application~1json/schema/properties/n/nullable: not a JSON Schema 2020-12 keyword"},
		{"example (OpenAPI 3.0)", "format: date-time }", "format: date-time, example: x }", "/components/schemas/Time/example"},
		{"null twice in an enum", "Time: { type: string, format: date-time }", `Time: { type: [string, "null"], enum: [a, null, null] }`,
			"/components/schemas/Time/enum: lists <nil> twice"},
		{"unknown format", "format: date-time", "format: datetime", "/components/schemas/Time/format: unknown format datetime"},
		{"then without if", "format: date-time }", "format: date-time, then: {} }", "/components/schemas/Time/then: does nothing without if"},
		{"dangling $ref", `$ref: "#/components/schemas/Time"`, `$ref: "#/components/schemas/Tme"`, "/components/schemas/Thing: "},
		{"type the meta-schema refuses", "Time: { type: string", "Time: { type: nullable", "/components/schemas/Time: "},
		{"path parameter", "schema: { type: string } }", "schema: { type: string, minLength: -1 } }", "/paths/~1things~1{id}/parameters/0/schema: "},
		{"response header", "X-N: { schema: { type: integer } }", "X-N: { schema: { type: int } }", "/post/responses/200/headers/X-N/schema: "},
		{"callbacks, which the walk does not read", "      requestBody:", "      callbacks: {}\n      requestBody:", "/post/callbacks: not read by this walk"},
		{"an OpenAPI 3.0 document", "openapi: 3.1.0", "openapi: 3.0.3", "want openapi 3.1.0"},
	} {
		doc := strings.Replace(contractDoc, tc.old, tc.new, 1)
		if doc == contractDoc {
			t.Fatalf("%s: %q not in the document", tc.name, tc.old)
		}
		_, err := compileContract([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// The body checks judge by the standard's rules ({} takes null; formats
// are asserted), and never skip: an undeclared media type, status or body
// is an error.
func TestContractChecksBodies(t *testing.T) {
	t.Parallel()
	k, err := compileContract([]byte(contractDoc))
	if err != nil {
		t.Fatal(err)
	}
	op := operation("/things/{id}", "POST")
	for _, tc := range []struct {
		name   string
		status int    // 0: the request
		ct     string // Content-Type
		body   string
		ok     bool
	}{
		{"request", 0, "application/json", `{"n":1,"note":null}`, true},
		{"request without the required body", 0, "", ``, false},
		{"request of a wrong type", 0, "application/json", `{"n":"1"}`, false},
		{"request of an undeclared media type", 0, "text/plain", `n=1`, false},
		{"request that is not JSON", 0, "application/json", `{"n":1} {}`, false},
		{"response with null", 200, "application/json; charset=utf-8", `{"when":null}`, true},
		{"response with a time", 200, "application/json", `{"when":"2025-01-02T03:04:05.000Z"}`, true},
		{"response breaking a format", 200, "application/json", `{"when":"yesterday"}`, false},
		{"response missing a field", 200, "application/json", `{}`, false},
		{"response by reference", 404, "application/problem+json", `{}`, true},
		{"response by reference, other media type", 404, "application/json", `{}`, false},
		{"response without content", 204, "", ``, true},
		{"response with a body where none is declared", 204, "application/json", `{}`, false},
		{"response of an undeclared status", 500, "application/json", `{}`, false},
	} {
		if tc.status == 0 {
			err = k.checkRequestBody(op, tc.ct, []byte(tc.body))
		} else {
			err = k.checkResponseBody(op, tc.status, tc.ct, []byte(tc.body))
		}
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
