package admission

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/admission/probe"
	"github.com/lockstep-dev/lockstep/manifest"
)

// served maps the probed pages to asset IDs and checks them against the
// manifest; it returns the mapping (the served IDs, those on the
// instance's own origin).
func (c *checker) served(m *manifest.Manifest, pages []*probe.Page, errs []error) probe.Mapped {
	cfg := c.cfg
	var ok []*probe.Page
	for i, err := range errs {
		if err != nil {
			c.unreachable("probe "+cfg.Probes[i], err)
			continue
		}
		ok = append(ok, pages[i])
	}
	if m == nil || len(cfg.Probes) == 0 {
		return probe.Mapped{}
	}
	if !cfg.AssetFreePages {
		for _, p := range ok {
			if one := probe.Map([]*probe.Page{p}, m.Assets.CDN); len(one.IDs) == 0 && len(one.Foreign) == 0 {
				c.add(Finding{Kind: KindProbeNoAssets, Subject: p.URL, Want: "a page that references the release's assets",
					Message: fmt.Sprintf("the probed page %s references no asset, and so proves nothing about what the instance serves (declare an asset-free page explicitly if it is one)", p.URL)})
			}
		}
	}
	mapped := probe.Map(ok, m.Assets.CDN)
	// What only an optional reference names (a custom element's URL
	// attribute, a preload of data) counts when it is a file of the
	// release: the browser may load it, so it is checked.
	for _, id := range mapped.Maybe {
		if _, found := m.Assets.File(id); found {
			mapped.IDs = append(mapped.IDs, id)
		}
	}
	slices.Sort(mapped.IDs)
	ids, foreign := c.refusedServed(m, mapped)
	for _, id := range ids {
		c.add(Finding{Kind: KindAssetNotInManifest, Subject: id, Want: "an asset of " + m.ID(),
			Message: fmt.Sprintf("the instance serves %s, which manifest %s does not list", id, m.ID())})
	}
	for _, u := range foreign {
		c.add(Finding{Kind: KindAssetForeignHost, Subject: u, Want: "a CDN base of the manifest, the instance, or an allowed host",
			Message: fmt.Sprintf("the instance references %s, on a host that is neither a CDN base of %s nor its own nor allowed", u, m.ID())})
	}
	files := make([]manifest.File, 0, len(mapped.IDs))
	for _, id := range mapped.IDs {
		f, found := m.Assets.File(id)
		if !found {
			f = manifest.File{Path: id, SHA256: strings.Repeat("0", 64)}
		}
		files = append(files, f)
	}
	c.update(func(d *Decision) {
		d.Served, d.Foreign = mapped.IDs, mapped.Foreign
		d.ServedFingerprint = manifest.Fingerprint(files)
	})
	return mapped
}

// refusedServed is what of mapped served refuses whatever else the check
// finds: the IDs the manifest does not list, and the foreign URLs on no
// allowed host.
func (c *checker) refusedServed(m *manifest.Manifest, mapped probe.Mapped) (ids, foreign []string) {
	for _, id := range mapped.IDs {
		if _, found := m.Assets.File(id); !found {
			ids = append(ids, id)
		}
	}
	for _, u := range mapped.Foreign {
		if !hostAllowed(u, c.cfg.AllowHosts) {
			foreign = append(foreign, u)
		}
	}
	return ids, foreign
}

// servesUnlisted reports whether the page names what served will refuse
// (refusedServed: the same rule, so the waits end early only for a
// refusal served is sure to make). It adds no finding: served does, for
// every page, once the waits are over.
func (c *checker) servesUnlisted(m *manifest.Manifest, p *probe.Page) bool {
	ids, foreign := c.refusedServed(m, probe.Map([]*probe.Page{p}, m.Assets.CDN))
	return len(ids) > 0 || len(foreign) > 0
}

// hostAllowed reports whether the URL's host is one of allow: "host",
// "host:port" or "*.domain" (any subdomain of domain).
func hostAllowed(rawURL string, allow []string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host, hostPort := strings.ToLower(u.Hostname()), strings.ToLower(u.Host)
	for _, a := range allow {
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case a == "":
		case strings.HasPrefix(a, "*."):
			if strings.HasSuffix(host, a[1:]) {
				return true
			}
		case a == host || a == hostPort:
			return true
		}
	}
	return false
}
