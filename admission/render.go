package admission

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/internal/report"
)

// Formats are the formats Write takes.
var Formats = report.TextJSON

// Write renders the decision in format: "text" (the verdict, what was
// observed and checked, every finding and action, for people) or "json"
// (the Decision, indented, as documented in docs/boot-gate.md; the bytes of
// `lockstep admit --report`).
func (d *Decision) Write(w io.Writer, format string) error {
	return report.Render(w, format, d, d.writeText)
}

// WriteFile writes the decision's JSON (Write's "json") to path,
// atomically: the file is the whole report or is left as it was.
func (d *Decision) WriteFile(path string) error {
	var b bytes.Buffer
	if err := d.Write(&b, "json"); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

func (d *Decision) writeText(w io.Writer) error {
	var b strings.Builder
	verdict := "ADMITTED"
	switch {
	case !d.Allowed && d.Unverified:
		verdict = "REFUSED (could not verify)"
	case !d.Allowed:
		verdict = "REFUSED"
	}
	if d.DryRun {
		verdict += " [dry run]"
	}
	fmt.Fprintf(&b, "%s", verdict)
	if d.Release != "" {
		fmt.Fprintf(&b, " against %s@%d (%s)", d.Release, d.Generation, d.ManifestDigest)
	}
	b.WriteString("\n")
	if !d.ManifestCachedAt.IsZero() {
		fmt.Fprintf(&b, "  manifest  from the trusted cache, accepted %s: the store could not be reached\n", d.ManifestCachedAt.UTC().Format(time.RFC3339))
	}
	if d.Unsigned {
		b.WriteString("  manifest  UNSIGNED: accepted without signature verification\n")
	}
	if d.Running != nil {
		fmt.Fprintf(&b, "  running   %s %s", d.Running.Source, orDash(d.RunningDigest.String()))
		if d.Match != "" {
			fmt.Fprintf(&b, " (matches the %s digest of image %s for %s)", d.Match, d.Image, d.Platform)
		}
		b.WriteString("\n")
	}
	switch d.ImageSignature {
	case SignaturesEmbedded:
		fmt.Fprintf(&b, "  signature image %s: from the manifest's embedded material (no registry request)\n", d.Image)
	case SignaturesRegistry:
		fmt.Fprintf(&b, "  signature image %s: from the registry (the manifest embeds no signature material)\n", d.Image)
	}
	if len(d.Served) > 0 {
		fmt.Fprintf(&b, "  served    %d assets, fingerprint %s\n", len(d.Served), d.ServedFingerprint)
	}
	if cl := d.Closure; cl != nil && cl.Referenced > 0 {
		if cl.Graph {
			by := "them"
			switch {
			case cl.Entries > 0:
				by = fmt.Sprintf("them and by the release's %d pages and %d entry files", cl.Roots-cl.Entries, cl.Entries)
			case cl.Roots > 0:
				by = fmt.Sprintf("them and by the release's %d pages", cl.Roots)
			}
			fmt.Fprintf(&b, "  closure   %d assets: %d referenced, %d loaded by %s; %d checked on the CDN\n", cl.Assets, cl.Referenced, cl.Assets-cl.Referenced, by, cl.Checked)
		} else {
			fmt.Fprintf(&b, "  closure   %d assets: the references only (the manifest records no asset graph); %d checked on the CDN\n", cl.Assets, cl.Checked)
		}
	}
	if d.CDNChecked > 0 {
		fmt.Fprintf(&b, "  cdn       %d checks\n", d.CDNChecked)
	}
	if d.InstanceChecked > 0 {
		fmt.Fprintf(&b, "  instance  %d checks of the assets it serves itself\n", d.InstanceChecked)
	}
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "  %-6s %s", f.Severity, f.Kind)
		if f.Subject != "" {
			fmt.Fprintf(&b, " [%s]", f.Subject)
		}
		fmt.Fprintf(&b, ": %s\n", f.Message)
	}
	for _, a := range d.Actions {
		fmt.Fprintf(&b, "  action    %s %s", a.Kind, a.Target)
		if a.Result != "" {
			fmt.Fprintf(&b, " %s", a.Result)
		}
		fmt.Fprintf(&b, ": %s", a.Status)
		if a.Heartbeats > 0 {
			fmt.Fprintf(&b, " (%d heartbeats)", a.Heartbeats)
		}
		if a.Error != "" {
			fmt.Fprintf(&b, " (%s)", a.Error)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  %d requests in %s", d.Requests, d.Duration.Round(time.Millisecond))
	if d.Waited > 0 {
		fmt.Fprintf(&b, ", %s of it waiting for the app to come up", d.Waited.Round(time.Millisecond))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
