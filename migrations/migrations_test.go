package migrations_test

import (
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tetherq/tether/migrations"
)

// versions returns the goose version numbers of the .sql files in dir.
func versions(t *testing.T, fsys fs.FS, dir string) []int64 {
	t.Helper()
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var out []int64
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		prefix, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(prefix, 10, 64)
		if !ok || err != nil || v <= 0 {
			t.Errorf("%s/%s: no goose version prefix (want NNNNN_name.sql)", dir, e.Name())
			continue
		}
		if slices.Contains(out, v) {
			t.Errorf("%s: version %d appears twice", dir, v)
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// Every dialect carries the same versions, so "00002" names one change of
// the schema whichever store a deployment runs.
func TestDialectsMirrorVersions(t *testing.T) {
	sqlite := versions(t, migrations.SQLite, "sqlite")
	postgres := versions(t, migrations.Postgres, "postgres")
	if len(sqlite) == 0 {
		t.Fatal("no sqlite migrations embedded")
	}
	if !slices.Equal(sqlite, postgres) {
		t.Errorf("migration versions differ:\nsqlite   %v\npostgres %v", sqlite, postgres)
	}
}
