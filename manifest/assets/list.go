package assets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// The asset list formats ParseList recognises. The values are stable.
const (
	// FormatVite is Vite's build manifest (.vite/manifest.json; manifest.json
	// before Vite 5): chunks with file, css, assets and imports.
	FormatVite = "vite"
	// FormatWebpackManifest is a flat map of names to files, as written by
	// webpack-manifest-plugin (manifest.json) and webpack-assets-manifest
	// (assets-manifest.json), values either strings or {"src": …}.
	FormatWebpackManifest = "webpack-manifest"
	// FormatAssetManifest is the {"files": {…}, "entrypoints": […]} shape
	// of create-react-app's asset-manifest.json (webpack-manifest-plugin
	// with a generate function).
	FormatAssetManifest = "asset-manifest"
	// FormatAssetsPlugin is assets-webpack-plugin's map of chunk names to
	// {extension: file or [files]}.
	FormatAssetsPlugin = "assets-webpack-plugin"
)

// List is a parsed asset list.
type List struct {
	// Format is one of the Format constants.
	Format string
	// Paths are the files the list names, relative to the asset
	// directory, sorted, each once.
	Paths []string
	// Loads is what the list says each file loads, by path, where it says
	// it: a Vite chunk's file loads the files of its imports and
	// dynamicImports and its css and assets. webpack's lists name an entry
	// point's files, not what loads what, and give none. Each list is
	// sorted, each path once, never the file itself.
	Loads map[string][]string
	// Entries are the files the list names as entry points, which a
	// server renders into its pages from the list (a backend integration)
	// or which no page of the build names: Vite's isEntry chunks' file and
	// css, webpack's entrypoints (create-react-app's asset-manifest.json,
	// webpack-assets-manifest's entrypoints), assets-webpack-plugin's named
	// chunks. A subset of Paths, sorted, each once; none when the list
	// names no entry (webpack-manifest-plugin's flat map).
	Entries []string
}

// ParseList reads an asset list, detecting its format from its shape, and
// returns the files it names. publicPath is a prefix to remove from every
// entry (a leading "/" is always removed); an entry that is an absolute URL
// must be under one of the cdn bases and is made relative to it. A
// document that is no known shape, an entry that is empty, and a Vite
// import of a chunk that is not in the manifest are errors.
func ParseList(data []byte, publicPath string, cdn []string) (*List, error) {
	return parseList(data, collector{publicPath: publicPath, cdn: cdn, seen: map[string]bool{}})
}

// ListEntries reads an asset list of the formats ParseList recognises, with
// the same checks, and returns its format and its entries as the list
// writes them (trimmed, without a query or fragment, sorted, each once):
// URLs, absolute paths and relative paths, not made relative to a CDN base
// or a public path. It is for a reader that resolves them as a browser
// would (the boot gate's probe, against the page it fetched).
func ListEntries(data []byte) (format string, entries []string, err error) {
	l, err := parseList(data, collector{raw: true, seen: map[string]bool{}})
	if err != nil {
		return "", nil, err
	}
	return l.Format, l.Paths, nil
}

func parseList(data []byte, c collector) (*List, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("want a JSON object: %w", err)
	}
	var format string
	var err error
	switch {
	case len(top) == 0:
		return nil, fmt.Errorf("the asset list is empty")
	case isVite(top):
		format, err = FormatVite, c.vite(top)
	case isAssetManifest(top):
		format, err = FormatAssetManifest, c.assetManifest(top)
	case isFlat(top):
		format, err = FormatWebpackManifest, c.flat(top)
	case isAssetsPlugin(top):
		format, err = FormatAssetsPlugin, c.assetsPlugin(top)
	default:
		return nil, fmt.Errorf("not a Vite manifest or a webpack assets manifest (webpack-manifest-plugin, webpack-assets-manifest, assets-webpack-plugin)")
	}
	if err != nil {
		return nil, err
	}
	sort.Strings(c.paths)
	entries := slices.Sorted(maps.Keys(c.entries))
	if len(entries) == 0 {
		entries = nil
	}
	return &List{Format: format, Paths: c.paths, Loads: c.loads, Entries: entries}, nil
}

// viteChunk is one entry of a Vite manifest; fields Vite may add are
// ignored.
type viteChunk struct {
	File           string   `json:"file"`
	IsEntry        bool     `json:"isEntry"`
	CSS            []string `json:"css"`
	Assets         []string `json:"assets"`
	Imports        []string `json:"imports"`
	DynamicImports []string `json:"dynamicImports"`
}

func isVite(top map[string]json.RawMessage) bool {
	for _, raw := range top {
		var c viteChunk
		if !isObject(raw) || json.Unmarshal(raw, &c) != nil || c.File == "" {
			return false
		}
	}
	return true
}

func isAssetManifest(top map[string]json.RawMessage) bool {
	var files map[string]string
	raw, ok := top["files"]
	return ok && json.Unmarshal(raw, &files) == nil
}

func isFlat(top map[string]json.RawMessage) bool {
	for k, raw := range top {
		if k == "entrypoints" && isObject(raw) {
			continue
		}
		var s string
		var src struct {
			Src string `json:"src"`
		}
		if json.Unmarshal(raw, &s) == nil {
			continue
		}
		if isObject(raw) && json.Unmarshal(raw, &src) == nil && src.Src != "" {
			continue
		}
		return false
	}
	return true
}

func isAssetsPlugin(top map[string]json.RawMessage) bool {
	for k, raw := range top {
		if k == "metadata" {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return false
		}
		for _, v := range m {
			if _, err := stringOrStrings(v); err != nil {
				return false
			}
		}
	}
	return true
}

func isObject(raw json.RawMessage) bool {
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{"))
}

func stringOrStrings(raw json.RawMessage) ([]string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []string{s}, nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return nil, err
	}
	return ss, nil
}

type collector struct {
	// raw keeps the entries as written (ListEntries).
	raw        bool
	publicPath string
	cdn        []string
	paths      []string
	seen       map[string]bool
	loads      map[string][]string
	// entries are the paths the list names as entry points (List.Entries);
	// entry makes add count what it adds as one.
	entries map[string]bool
	entry   bool
}

func (c *collector) add(where, entry string) error {
	p, err := c.entryPath(entry)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if !c.seen[p] {
		c.seen[p] = true
		c.paths = append(c.paths, p)
	}
	if c.entry {
		if c.entries == nil {
			c.entries = map[string]bool{}
		}
		c.entries[p] = true
	}
	return nil
}

// addEntries adds what add adds, as entry points (List.Entries).
func (c *collector) addEntries(add func() error) error {
	c.entry = true
	defer func() { c.entry = false }()
	return add()
}

// entryPath turns an asset list entry into a path relative to the asset
// directory.
func (c *collector) entryPath(entry string) (string, error) {
	e := strings.TrimSpace(entry)
	if e == "" {
		return "", fmt.Errorf("empty entry")
	}
	if c.raw {
		return cutQuery(e), nil
	}
	if strings.Contains(e, "://") || strings.HasPrefix(e, "//") {
		for _, base := range c.cdn {
			b := strings.TrimSuffix(base, "/") + "/"
			if strings.HasPrefix(b, "//") {
				continue
			}
			if rest, ok := strings.CutPrefix(e, b); ok {
				return cutQuery(rest), nil
			}
			if u, err := url.Parse(b); err == nil && strings.HasPrefix(e, "//") {
				if rest, ok := strings.CutPrefix(e, "//"+u.Host+u.Path); ok {
					return cutQuery(rest), nil
				}
			}
		}
		return "", fmt.Errorf("%q is a URL under none of the CDN bases %v", entry, c.cdn)
	}
	e = cutQuery(e)
	if c.publicPath != "" {
		e = strings.TrimPrefix(e, c.publicPath)
	}
	return strings.TrimPrefix(e, "/"), nil
}

// cutQuery removes a query or fragment: the CDN serves the file without it.
func cutQuery(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		return s[:i]
	}
	return s
}

func (c *collector) vite(top map[string]json.RawMessage) error {
	keys := sortedKeys(top)
	for _, k := range keys {
		var ch viteChunk
		if err := json.Unmarshal(top[k], &ch); err != nil {
			return fmt.Errorf("chunk %q: %w", k, err)
		}
		where := fmt.Sprintf("chunk %q", k)
		for _, f := range append(append([]string{ch.File}, ch.CSS...), ch.Assets...) {
			if err := c.add(where, f); err != nil {
				return err
			}
		}
		if ch.IsEntry {
			// A server renders the entry's script and stylesheets (Vite's
			// backend integration); what they import is reached by Loads.
			err := c.addEntries(func() error {
				for _, f := range append([]string{ch.File}, ch.CSS...) {
					if err := c.add(where, f); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		var loads []string
		for _, imp := range append(append([]string(nil), ch.Imports...), ch.DynamicImports...) {
			raw, ok := top[imp]
			if !ok {
				return fmt.Errorf("%s imports %q, which is not in the manifest", where, imp)
			}
			var dep viteChunk
			if err := json.Unmarshal(raw, &dep); err != nil {
				return fmt.Errorf("chunk %q: %w", imp, err)
			}
			loads = append(loads, dep.File)
		}
		if err := c.addLoads(where, ch.File, append(append(loads, ch.CSS...), ch.Assets...)); err != nil {
			return err
		}
	}
	return nil
}

// addLoads records that the file of entry from loads the files of the
// entries to.
func (c *collector) addLoads(where, from string, to []string) error {
	src, err := c.entryPath(from)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	for _, e := range to {
		p, err := c.entryPath(e)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if p == src || slices.Contains(c.loads[src], p) {
			continue
		}
		if c.loads == nil {
			c.loads = map[string][]string{}
		}
		c.loads[src] = append(c.loads[src], p)
	}
	slices.Sort(c.loads[src])
	return nil
}

func (c *collector) assetManifest(top map[string]json.RawMessage) error {
	var files map[string]string
	if err := json.Unmarshal(top["files"], &files); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	for _, k := range sortedKeys(files) {
		if err := c.add(fmt.Sprintf("files[%q]", k), files[k]); err != nil {
			return err
		}
	}
	if raw, ok := top["entrypoints"]; ok {
		return c.addEntries(func() error { return c.strings("entrypoints", raw) })
	}
	return nil
}

func (c *collector) flat(top map[string]json.RawMessage) error {
	for _, k := range sortedKeys(top) {
		raw := top[k]
		if k == "entrypoints" && isObject(raw) {
			if err := c.addEntries(func() error { return c.strings("entrypoints", raw) }); err != nil {
				return err
			}
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var src struct {
				Src string `json:"src"`
			}
			if err := json.Unmarshal(raw, &src); err != nil {
				return fmt.Errorf("%q: %w", k, err)
			}
			s = src.Src
		}
		if err := c.add(fmt.Sprintf("%q", k), s); err != nil {
			return err
		}
	}
	return nil
}

func (c *collector) assetsPlugin(top map[string]json.RawMessage) error {
	for _, k := range sortedKeys(top) {
		if k == "metadata" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(top[k], &m); err != nil {
			return fmt.Errorf("%q: %w", k, err)
		}
		// A named chunk is an entry point (the plugin lists entries by
		// name); "" holds the other assets.
		c.entry = k != ""
		for _, ext := range sortedKeys(m) {
			files, err := stringOrStrings(m[ext])
			if err != nil {
				c.entry = false
				return fmt.Errorf("%q.%s: %w", k, ext, err)
			}
			for _, f := range files {
				if err := c.add(fmt.Sprintf("%q.%s", k, ext), f); err != nil {
					c.entry = false
					return err
				}
			}
		}
		c.entry = false
	}
	return nil
}

// strings adds every string found anywhere in raw (webpack entrypoints,
// nested by chunk and extension).
func (c *collector) strings(where string, raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch t := v.(type) {
		case string:
			return c.add(where, t)
		case []any:
			for _, e := range t {
				if err := walk(e); err != nil {
					return err
				}
			}
		case map[string]any:
			if src, ok := t["src"].(string); ok {
				return c.add(where, src) // {"src", "integrity"}
			}
			for _, k := range sortedKeys(t) {
				if err := walk(t[k]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
