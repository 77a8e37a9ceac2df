package app

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// The release build stamps these with -ldflags "-X" (see .goreleaser.yaml
// and .ko.yaml): Version the release's version (1.2.3 for the tag
// v1.2.3), Commit the full commit hash, Date the build time (RFC 3339, the commit's
// time, so that builds reproduce). A build that is not stamped is a
// development build and says so. Snapshot is "true" in a snapshot build
// of the release pipeline (goreleaser --snapshot, as the test command
// makes): stamped, but not a release, and it says so.
var (
	Version  = "dev"
	Commit   = ""
	Date     = ""
	Snapshot = ""
)

// buildInfo is what `lockstep version` reports.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	// Release is true only for a build stamped by the release pipeline
	// from a release tag: not for a snapshot.
	Release bool `json:"release"`
	// Snapshot is true for a snapshot build of the release pipeline.
	Snapshot bool `json:"snapshot,omitempty"`
	// Modified is true when the build's checkout had uncommitted changes
	// (as far as the Go toolchain recorded it).
	Modified bool `json:"modified,omitempty"`
}

// currentBuild returns the stamped build information, or, for a
// development build, what the Go toolchain recorded: the module version of
// `go install ...@vX.Y.Z`, and the VCS revision and time of a build in a
// checkout.
func currentBuild() buildInfo {
	b := buildInfo{
		Version: Version, Commit: Commit, Date: Date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		Snapshot:  Snapshot == "true",
	}
	stamped := Commit != "" && Version != "dev"
	b.Release = stamped && !b.Snapshot
	if stamped {
		return b
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := info.Main.Version; strings.HasPrefix(v, "v") && b.Version == "dev" {
		b.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func versionCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print lockstep's version, commit, build date and Go version",
		Description: describe("",
			[]string{
				"lockstep version",
				"lockstep version --format json",
			},
			exits{
				0: "printed",
				2: "a bad --format",
			}),
		Flags: []cli.Flag{formatFlag("text", "json")},
		Action: func(c *cli.Context) error {
			f, err := format(c, "text", "json")
			if err != nil {
				return err
			}
			b := currentBuild()
			if f == "json" {
				return json.NewEncoder(c.App.Writer).Encode(b)
			}
			_, err = fmt.Fprint(c.App.Writer, b.text())
			return err
		},
	}
}

// text renders b for people: one "key value" line each, with a development
// build named as such.
func (b buildInfo) text() string {
	unknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	version := b.Version
	switch {
	case b.Snapshot:
		version += " (snapshot build, not a release)"
	case !b.Release:
		version += " (development build, not a release)"
	}
	commit := unknown(b.Commit)
	if b.Modified {
		commit += " (modified)"
	}
	return fmt.Sprintf("lockstep %s\ncommit:   %s\nbuilt:    %s\ngo:       %s\nplatform: %s\n",
		version, commit, unknown(b.Date), b.GoVersion, b.Platform)
}
