package probe

import (
	"net/url"
	"sort"
	"strings"
)

// Mapped is the asset IDs a set of references names.
type Mapped struct {
	// IDs are the asset IDs, sorted, each once.
	IDs []string `json:"ids"`
	// Foreign are references to hosts that are neither a CDN base nor the
	// page's own origin, sorted, each once.
	Foreign []string `json:"foreign,omitempty"`
	// Local are the references to the page's own origin (an app that
	// serves assets itself), where a browser fetches them: on the
	// instance. Sorted by base, then ID, each once.
	Local []Local `json:"local,omitempty"`
	// Maybe are the asset IDs that only Optional references name (under a
	// CDN base or on the page's origin), sorted, each once: the gate adds
	// those the manifest lists to IDs, and lets the others be. An optional
	// reference to another host is dropped.
	Maybe []string `json:"maybe,omitempty"`
}

// Local is an asset a page references on its own origin.
type Local struct {
	// ID is the asset ID (also in Mapped.IDs).
	ID string `json:"id"`
	// Base is the URL on the instance that ID is relative to: the page's
	// origin and the path before the ID (the path of a CDN base the
	// reference starts with, else "/"), so that Base + ID is the URL
	// fetched (without its query).
	Base string `json:"base"`
}

// Map maps the references of pages to asset IDs under the CDN bases (see
// the package documentation for the rules).
func Map(pages []*Page, cdn []string) Mapped {
	type base struct {
		scheme, host, path string
	}
	var bases []base
	for _, b := range cdn {
		u, err := url.Parse(b)
		if err != nil || u.Host == "" {
			continue
		}
		bases = append(bases, base{strings.ToLower(u.Scheme), hostPort(u), strings.TrimSuffix(u.Path, "/") + "/"})
	}
	// The longest base path first, so that the most specific base wins.
	sort.SliceStable(bases, func(i, j int) bool { return len(bases[i].path) > len(bases[j].path) })
	ids, foreign, local, maybe := map[string]bool{}, map[string]bool{}, map[Local]bool{}, map[string]bool{}
	for _, p := range pages {
		pu, _ := url.Parse(p.URL)
		for _, r := range p.References {
			if r.URL == "" {
				if id := strings.TrimPrefix(r.ID, "./"); id != "" {
					ids[id] = true
				}
				continue
			}
			u, err := url.Parse(r.URL)
			if err != nil {
				if !r.Optional {
					foreign[r.URL] = true
				}
				continue
			}
			scheme := strings.ToLower(u.Scheme)
			if scheme != "http" && scheme != "https" {
				continue // data:, blob:, javascript:, mailto:
			}
			id, ok, onCDN := "", false, false
			for _, b := range bases {
				if scheme == b.scheme && hostPort(u) == b.host && strings.HasPrefix(u.Path, b.path) {
					id, ok = strings.TrimPrefix(u.Path, b.path), true
					onCDN = pu == nil || hostPort(u) != hostPort(pu)
					break
				}
			}
			onOrigin := false
			if !ok && pu != nil && scheme == strings.ToLower(pu.Scheme) && hostPort(u) == hostPort(pu) {
				id, ok, onOrigin = strings.TrimPrefix(u.Path, "/"), true, true
				for _, b := range bases {
					if b.path != "/" && strings.HasPrefix(u.Path, b.path) {
						id = strings.TrimPrefix(u.Path, b.path)
						break
					}
				}
			}
			switch {
			case r.Optional && !onCDN:
				// On the page's own origin an optional URL may be a
				// navigation or an API (a custom element's href, a
				// preload of data): it is held to the manifest only
				// when it names a file of the release. Under a CDN base
				// on another host, it is an asset like any other: one
				// the manifest does not list is refused, so that a page
				// of another build, whose islands name other files, is
				// not admitted.
				if ok && id != "" {
					maybe[id] = true
				}
			case !ok:
				u.RawQuery, u.Fragment = "", ""
				foreign[u.String()] = true
			case id != "":
				ids[id] = true
				if onOrigin {
					base := url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimSuffix(u.Path, id)}
					local[Local{ID: id, Base: base.String()}] = true
				}
			}
		}
	}
	locals := make([]Local, 0, len(local))
	for l := range local {
		locals = append(locals, l)
	}
	sort.Slice(locals, func(i, j int) bool {
		if locals[i].Base != locals[j].Base {
			return locals[i].Base < locals[j].Base
		}
		return locals[i].ID < locals[j].ID
	})
	if len(locals) == 0 {
		locals = nil
	}
	for id := range ids {
		delete(maybe, id)
	}
	m := Mapped{IDs: sorted(ids), Foreign: sorted(foreign), Local: locals, Maybe: sorted(maybe)}
	if len(m.Maybe) == 0 {
		m.Maybe = nil
	}
	return m
}

// hostPort is the lower-case host with the scheme's default port made
// explicit.
func hostPort(u *url.URL) string {
	h, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h + ":" + port
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
