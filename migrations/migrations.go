// Package migrations holds the schema of each SQL dialect as goose
// migrations, embedded so the server migrates itself at start-up. Version
// numbers are mirrored across dialects: 00001 is the same change everywhere.
package migrations

import (
	"embed"
	"io/fs"
)

// SQLite is the migrations directory of the SQLite backend.
//
//go:embed sqlite/*.sql
var SQLite embed.FS

// Postgres is the migrations directory of the Postgres backend.
//
//go:embed postgres/*.sql
var Postgres embed.FS

// SQLiteDir and PostgresDir are the dialects' migrations as goose reads
// them: the files at the root.
func SQLiteDir() fs.FS { return sub(SQLite, "sqlite") }

// PostgresDir: see SQLiteDir.
func PostgresDir() fs.FS { return sub(Postgres, "postgres") }

// sub is dir of f. fs.Sub fails only on an invalid path, and these are
// constants.
func sub(f embed.FS, dir string) fs.FS {
	d, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return d
}
