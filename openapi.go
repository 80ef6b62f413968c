// Package tether holds what belongs to the whole project rather than to one
// package: the HTTP API contract, embedded so the server can serve it and the
// api tests can check real responses against it.
package tether

import _ "embed"

// OpenAPI is openapi.yaml, the OpenAPI 3.0 description of the HTTP API.
//
//go:embed openapi.yaml
var OpenAPI []byte
