package record

import (
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
)

// servedRules are Options' rules of where files are served.
type servedRules struct {
	instance, both, cdnDirs []string
}

// markServed sets Served on the files the instance serves: those a both
// pattern matches (their path, a folder of it, or their name) on the CDN
// and the instance; else those an instance pattern matches, and with
// cdnDirs those under none of its folders, on the instance alone. It logs
// how many. A pattern or folder that names no file is a
// *manifest.ValidationError.
func markServed(files []manifest.File, rules servedRules, log *slog.Logger) error {
	if len(rules.instance)+len(rules.both)+len(rules.cdnDirs) == 0 {
		return nil
	}
	cdnDirs := rules.cdnDirs
	used := map[string]bool{}
	matches := func(p string, patterns []string) bool {
		hit := false
		for _, pat := range patterns {
			for q := p; q != "." && q != ""; q = path.Dir(q) {
				if ok, _ := path.Match(pat, q); ok {
					used["pattern "+pat], hit = true, true
				}
			}
			if ok, _ := path.Match(pat, path.Base(p)); ok {
				used["pattern "+pat], hit = true, true
			}
		}
		return hit
	}
	underCDN := func(p string) bool {
		if len(cdnDirs) == 0 {
			return true
		}
		under := false
		for _, d := range cdnDirs {
			if strings.HasPrefix(p, strings.Trim(d, "/")+"/") {
				used["folder "+d], under = true, true
			}
		}
		return under
	}
	n := 0
	for i := range files {
		p := files[i].Path
		inst := matches(p, rules.instance)
		if !underCDN(p) {
			inst = true
		}
		both := matches(p, rules.both)
		switch {
		case both:
			files[i].Served = manifest.ServedCDNAndInstance
		case inst:
			files[i].Served = manifest.ServedInstance
		default:
			files[i].Served = ""
		}
		if both || inst {
			n++
		}
	}
	for _, pat := range append(slices.Clone(rules.instance), rules.both...) {
		if !used["pattern "+pat] {
			return &manifest.ValidationError{Field: "assets.files.served", Reason: fmt.Sprintf("the instance path pattern %q matches no recorded file", pat)}
		}
	}
	for _, d := range cdnDirs {
		if !used["folder "+d] {
			return &manifest.ValidationError{Field: "assets.files.served", Reason: fmt.Sprintf("the CDN path %q holds no recorded file", d)}
		}
	}
	if log != nil {
		log.Info("served by the instance (alone or with the CDN)", "files", n)
	}
	return nil
}
