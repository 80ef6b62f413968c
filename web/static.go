package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
)

// static holds the dashboard's own CSS and script; nothing third-party.
//
//go:embed static/*.css static/*.js static/*.svg
var static embed.FS

// assetVersion changes whenever an asset does; pages link assets with it
// (?v=…), so browsers may cache them for good.
var assetVersion = func() string {
	h := sha256.New()
	_ = fs.WalkDir(static, "static", func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			b, _ := static.ReadFile(path)
			h.Write([]byte(path))
			h.Write(b)
		}
		return err
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}()

var staticFiles = http.FileServerFS(static)

func serveStatic(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/") {
		http.NotFound(w, r) // no directory listings
		return
	}
	if r.URL.Query().Get("v") == assetVersion {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	staticFiles.ServeHTTP(w, r)
}

// assetURL is the versioned URL of a static file.
func assetURL(name string) string { return "/static/" + name + "?v=" + assetVersion }
