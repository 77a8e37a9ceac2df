package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
)

// otherTools are the flags of other programs that the documents use
// (act, aws, kubectl, cosign, crane, curl, goreleaser, helm, sha256sum,
// systemctl, systemd-analyze).
var otherTools = map[string]bool{
	"--auto-scaling-group-name": true, "--lifecycle-hook-name": true, "--lifecycle-transition": true,
	"--default-result": true, "--heartbeat-timeout": true, "--cert": true, "--type": true, "--clean": true,
	"--snapshot": true, "--ignore-missing": true, "--new-bundle-format": true, "--now": true, "--parallel": true,
	"--parallel-max": true, "--http2": true, "--cacert": true, "--predicate": true, "--recursive": true, "--repo": true, "--set-platform": true, "--tlog-upload": true,
	"--root": true, "--proto-redir": true, "--local-repository": true,
	"--create-namespace": true, "--namespace": true, "--set": true, "--set-file": true, "--validate": true, "--wait": true,
}

var flagRE = regexp.MustCompile(`(?:^|[^\w-])(--[a-z][a-z0-9-]*)`)

// TestFlagsExist fails when README.md or a page of docs/ names a flag that
// no lockstep command has (and that is not another tool's): a flag renamed
// or removed in the code, and not in the documents.
func TestFlagsExist(t *testing.T) {
	known := map[string]bool{"--help": true, "--version": true}
	var walk func([]*cli.Command)
	add := func(flags []cli.Flag) {
		for _, f := range flags {
			for _, n := range f.Names() {
				known["--"+n] = true
			}
		}
	}
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			add(c.Flags)
			walk(c.Subcommands)
		}
	}
	a := app.New()
	add(a.Flags)
	walk(a.Commands)

	unknown := map[string][]string{}
	for _, file := range markdownFiles(t, "..") {
		if strings.HasPrefix(file, "docs/reference/") {
			continue // generated from the definitions themselves
		}
		raw, err := os.ReadFile(filepath.Join("..", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range flagRE.FindAllStringSubmatch(string(raw), -1) {
			if f := m[1]; !known[f] && !otherTools[f] && !strings.HasSuffix(f, "-") { // "--certificate-*" names several
				unknown[f] = append(unknown[f], file)
			}
		}
	}
	var names []string
	for f := range unknown {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		t.Errorf("%s is no flag of lockstep (in %s); if it is another tool's, add it to otherTools", f, strings.Join(unknown[f], ", "))
	}
}
