package cdn

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/internal/report"
)

// Formats are the formats Write takes.
var Formats = []string{"text", "json", "markdown", "sarif"}

// Write renders the report in format: "text" (failures, TLS endpoints and
// a summary line), "json" (the Report as documented in docs/cdn.md),
// "markdown" (for a GitHub job summary) or "sarif" (SARIF 2.1.0, one
// result per failing asset and per TLS finding).
func (r *Report) Write(w io.Writer, format, version string) error {
	switch format {
	case "text":
		return r.writeText(w)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	case "markdown":
		return r.writeMarkdown(w)
	case "sarif":
		return r.SARIF(version).Write(w)
	}
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Line is the summary in one line.
func (r *Report) Line() string {
	s := r.Summary
	verdict := "ok"
	switch err := r.Err(); {
	case err == nil && s.TLSExpiring > 0:
		verdict = "ok, with TLS warnings"
	case err != nil && s.Missing+s.Wrong+s.Loops+s.TLSErrors > 0:
		verdict = "FAILED"
	case err != nil:
		verdict = "NOT VERIFIED"
	}
	bases := "bases"
	if len(r.Bases) == 1 {
		bases = "base"
	}
	return fmt.Sprintf("%s: checked %d (%d files × %d %s): %d ok, %d missing, %d wrong, %d unreachable, %d loops, %d TLS errors; %s; %d requests, %d retries, %s",
		verdict, s.Checked, r.Files, len(r.Bases), bases, s.OK, s.Missing, s.Wrong, s.Unreachable, s.Loops, s.TLSErrors,
		r.compared(), s.Requests, s.Retries, s.Duration.Round(time.Millisecond))
}

// compared says what the checks compared, e.g. "compared 3 by bytes, 0 by
// checksum header, 2 by size only".
func (r *Report) compared() string {
	s := r.Summary
	return fmt.Sprintf("compared %d by bytes, %d by checksum header, %d by size only", s.Bytes, s.Checksum, s.SizeOnly)
}

// sizeOnlyShown is how many size-only assets the text report names.
const sizeOnlyShown = 20

// sizeOnly returns the ok checks that compared the size alone.
func (r *Report) sizeOnly() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Status == StatusOK && res.Compared == ComparedSize {
			out = append(out, res)
		}
	}
	return out
}

func (r *Report) writeText(w io.Writer) error {
	if failed := r.Failed(); len(failed) > 0 {
		t := report.NewTable("STATUS", "PATH", "URL", "REASON")
		for _, res := range failed {
			t.Row(string(res.Status), res.Path, res.URL, res.Reason)
		}
		if err := t.Text(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if so := r.sizeOnly(); len(so) > 0 {
		fmt.Fprintf(w, "%d ok by size only (no checksum header: other bytes of that size would pass; a full check hashes them, one that requires content refuses them):\n", len(so))
		for i, res := range so {
			if i == sizeOnlyShown {
				fmt.Fprintf(w, "  … and %d more (the JSON report says it of each)\n", len(so)-i)
				break
			}
			fmt.Fprintf(w, "  %s\n", res.URL)
		}
		fmt.Fprintln(w)
	}
	if len(r.TLS) > 0 {
		t := report.NewTable("TLS ENDPOINT", "EXPIRES", "STATUS", "SUBJECT")
		for _, e := range r.TLS {
			t.Row(e.Host, expiry(e), tlsStatus(e), e.Subject)
		}
		if err := t.Text(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if r.Origin != nil && r.Origin.Note != "" {
		fmt.Fprintf(w, "origin %s: %s\n", r.Origin.URL, r.Origin.Note)
	}
	_, err := fmt.Fprintln(w, r.Line())
	return err
}

func expiry(e Endpoint) string {
	days := float64(e.ExpiresInSeconds) / 86400
	if days < 0 {
		return fmt.Sprintf("%s (expired %.1f days ago)", e.NotAfter.Format(time.DateOnly), -days)
	}
	return fmt.Sprintf("%s (in %.1f days)", e.NotAfter.Format(time.DateOnly), days)
}

func tlsStatus(e Endpoint) string {
	if e.Error != "" {
		return e.Status + ": " + e.Error
	}
	return e.Status
}

func (r *Report) writeMarkdown(w io.Writer) error {
	s := r.Summary
	fmt.Fprintf(w, "## lockstep cdn check\n\n**%s**\n\n", report.Cell(r.Line()))
	t := report.NewTable("checked", "ok", "missing", "wrong", "unreachable", "loops", "TLS errors", "TLS expiring",
		"by bytes", "by checksum", "by size only", "requests", "retries", "duration")
	t.Row(fmt.Sprint(s.Checked), fmt.Sprint(s.OK), fmt.Sprint(s.Missing), fmt.Sprint(s.Wrong), fmt.Sprint(s.Unreachable),
		fmt.Sprint(s.Loops), fmt.Sprint(s.TLSErrors), fmt.Sprint(s.TLSExpiring),
		fmt.Sprint(s.Bytes), fmt.Sprint(s.Checksum), fmt.Sprint(s.SizeOnly), fmt.Sprint(s.Requests), fmt.Sprint(s.Retries),
		s.Duration.Round(time.Millisecond).String())
	if err := t.Markdown(w); err != nil {
		return err
	}
	if failed := r.Failed(); len(failed) > 0 {
		fmt.Fprintf(w, "\n### Failing assets (%d)\n\n", len(failed))
		t := report.NewTable("status", "path", "URL", "reason")
		for _, res := range failed {
			t.Row(report.Code(string(res.Status)), report.Code(res.Path), report.Cell(res.URL), report.Cell(res.Reason))
		}
		if err := t.Markdown(w); err != nil {
			return err
		}
	}
	if len(r.TLS) > 0 {
		fmt.Fprint(w, "\n### TLS endpoints\n\n")
		t := report.NewTable("endpoint", "expires", "status", "subject")
		for _, e := range r.TLS {
			t.Row(report.Code(e.Host), report.Cell(expiry(e)), report.Cell(tlsStatus(e)), report.Cell(e.Subject))
		}
		if err := t.Markdown(w); err != nil {
			return err
		}
	}
	if r.Origin != nil && r.Origin.Note != "" {
		fmt.Fprintf(w, "\nOrigin %s: %s\n", report.Code(r.Origin.URL), report.Cell(r.Origin.Note))
	}
	return nil
}

// The SARIF rules, one per failing status and TLS finding.
var sarifRules = []report.Rule{
	rule("cdn/missing", "AssetMissing", "An asset of the release is not on the CDN (403, 404 or 410).", report.LevelError),
	rule("cdn/wrong-size", "AssetWrongSize", "The CDN serves an asset at another size than recorded.", report.LevelError),
	rule("cdn/wrong-content", "AssetWrongContent", "The CDN serves other bytes than recorded (a stated hash, or the bytes, differ).", report.LevelError),
	rule("cdn/unreachable", "AssetUnreachable", "The CDN could not be checked for an asset, after retries.", report.LevelError),
	rule("cdn/size-only", "AssetSizeOnly", "Only an asset's size was compared (no checksum header, no --full), and --require-content asks for more.", report.LevelError),
	rule("cdn/loop", "CDNLoop", "A redirect loop, a redirect chain over the cap, or a CDN-Loop header naming a CDN twice.", report.LevelError),
	rule("cdn/tls-error", "TLSError", "An endpoint's certificate did not verify: expired, unknown authority or wrong name.", report.LevelError),
	rule("cdn/tls-expiring", "TLSExpiring", "An endpoint's certificate expires soon.", report.LevelWarning),
}

func rule(id, name, text, level string) report.Rule {
	return report.Rule{ID: id, Name: name, ShortDescription: report.Message{Text: text}, DefaultConfiguration: &report.Config{Level: level}}
}

// SARIF returns the report as a SARIF 2.1.0 log: one result per failing
// asset check (its location the asset path, relative to the base
// "ASSETS"), and one per TLS endpoint that failed or expires soon (located
// at "tls/HOST" relative to "ENDPOINTS", and logically at the endpoint).
func (r *Report) SARIF(version string) *report.SARIF {
	s := report.NewSARIF("lockstep", version, "https://github.com/lockstep-dev/lockstep", sarifRules...)
	base := ""
	if len(r.Bases) == 1 {
		base = r.Bases[0]
	}
	s.Base("ASSETS", base, "the release's assets, by their path in the manifest: the files of the build's --assets directory, as every CDN base serves them (each result's url property is the one checked)")
	s.Base("ENDPOINTS", "", "the TLS endpoints the check touched, as tls/HOST")
	for _, res := range r.Failed() {
		out := s.Add("cdn/"+string(res.Status), "", fmt.Sprintf("%s %s: %s", res.URL, res.Status, res.Reason), report.File(res.Path, "ASSETS"))
		out.PartialFingerprints = map[string]string{"lockstepAsset/v1": string(res.Status) + ":" + res.URL}
		out.Properties = map[string]any{"url": res.URL}
		if res.HTTPStatus != 0 {
			out.Properties["httpStatus"] = res.HTTPStatus
		}
	}
	for _, e := range r.TLS {
		// Code-scanning UIs want a physical location on every result: the
		// endpoint stands in for a file, beside its logical location.
		loc := report.File("tls/"+e.Host, "ENDPOINTS")
		loc.LogicalLocations = report.Logical(e.Host, "endpoint").LogicalLocations
		switch e.Status {
		case TLSExpired, TLSInvalid:
			s.Add("cdn/tls-error", "", fmt.Sprintf("%s: certificate %s, not after %s: %s", e.Host, e.Status, e.NotAfter.Format(time.RFC3339), e.Error), loc)
		case TLSExpiring:
			s.Add("cdn/tls-expiring", "", fmt.Sprintf("%s: certificate expires %s", e.Host, expiry(e)), loc)
		}
	}
	return s
}
