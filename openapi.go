// Package tether holds what belongs to the whole project rather than to one
// package: the HTTP API contract, embedded so the server can serve it and the
// api tests can check real responses against it.
package tether

import _ "embed"

// OpenAPI is openapi.yaml, the OpenAPI 3.1 description of the HTTP API; its
// schemas are plain JSON Schema 2020-12 (the api tests compile each one).
//
//go:embed openapi.yaml
var OpenAPI []byte
