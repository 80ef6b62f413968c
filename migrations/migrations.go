// Package migrations holds the schema of each SQL dialect as goose
// migrations, embedded so the server migrates itself at start-up. Version
// numbers are mirrored across dialects: 00001 is the same change everywhere.
package migrations

import "embed"

// SQLite is the migrations directory of the SQLite backend.
//
//go:embed sqlite/*.sql
var SQLite embed.FS

// Postgres is the migrations directory of the Postgres backend.
//
//go:embed postgres/*.sql
var Postgres embed.FS
