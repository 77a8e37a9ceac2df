package fleet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes the report as indented JSON (the documented shape).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteText writes the report for people: the summary, the groups, then
// every divergent and unreachable instance with what differs.
func (r *Report) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	s := r.Summary
	fmt.Fprintf(b, "fleet %s@%d (manifest %s): %s\n", r.Manifest.Release, r.Manifest.Generation, r.Manifest.Digest, s.Result)
	fmt.Fprintf(b, "  %d instances: %d run the release exactly, %d divergent, %d unreachable (%d allowed)\n",
		s.Instances, s.Match, s.Divergent, s.Unreachable, s.UnreachableAllowed)
	if len(r.Groups) > 0 {
		fmt.Fprintf(b, "groups:\n")
		for _, g := range r.Groups {
			fmt.Fprintf(b, "  %6d  %-9s running %s  assets %s  generation %d\n", g.Count, matchWord(g.Match), orNone(g.Running), orNone(g.Fingerprint), g.Generation)
		}
	}
	if len(r.Divergent) > 0 {
		fmt.Fprintf(b, "divergent:\n")
		for _, in := range r.Divergent {
			fmt.Fprintf(b, "  %s (%s)\n", in.Name, in.Target)
			for _, d := range in.Differences {
				fmt.Fprintf(b, "    %s: %s\n", d.Kind, d.Message)
				if len(d.Want) > 0 && d.Kind != DiffNotAdmitted {
					fmt.Fprintf(b, "      got  %s\n      want %s\n", orNone(d.Got), strings.Join(d.Want, " or "))
				}
				for _, a := range d.Assets {
					fmt.Fprintf(b, "      %s\n", a)
				}
				if len(d.Findings) > 0 {
					fmt.Fprintf(b, "      findings: %s\n", strings.Join(d.Findings, ", "))
				}
			}
		}
	}
	if len(r.Unreachable) > 0 {
		fmt.Fprintf(b, "unreachable:\n")
		for _, in := range r.Unreachable {
			fmt.Fprintf(b, "  %s (%s): %s: %s\n", in.Name, orNone(in.Target), in.Problem.Kind, in.Problem.Message)
		}
	}
	fmt.Fprintf(b, "%d requests, %d retries, %.2fs\n", r.Requests, r.Retries, r.DurationSeconds)
	return b.Flush()
}

// WriteMarkdown writes the report as GitHub-flavoured markdown, for a job
// summary.
func (r *Report) WriteMarkdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	s := r.Summary
	icon := map[string]string{ResultMatch: "✅", ResultDivergent: "❌", ResultUnverified: "⚠️"}[s.Result]
	fmt.Fprintf(b, "## %s Fleet check: %s@%d is %s\n\n", icon, mdEscape(r.Manifest.Release), r.Manifest.Generation, s.Result)
	fmt.Fprintf(b, "Manifest `%s`.\n\n", r.Manifest.Digest)
	fmt.Fprintf(b, "| instances | run the release exactly | divergent | unreachable (allowed) |\n| ---: | ---: | ---: | ---: |\n")
	fmt.Fprintf(b, "| %d | %d | %d | %d (%d) |\n\n", s.Instances, s.Match, s.Divergent, s.Unreachable, s.UnreachableAllowed)
	if len(r.Groups) > 0 {
		fmt.Fprintf(b, "### Groups\n\n| instances | | running digest | served-asset fingerprint | generation |\n| ---: | --- | --- | --- | ---: |\n")
		for _, g := range r.Groups {
			fmt.Fprintf(b, "| %d | %s | `%s` | `%s` | %d |\n", g.Count, matchWord(g.Match), orNone(g.Running), orNone(g.Fingerprint), g.Generation)
		}
		b.WriteString("\n")
	}
	if len(r.Divergent) > 0 {
		fmt.Fprintf(b, "### Divergent\n\n| instance | difference | detail |\n| --- | --- | --- |\n")
		for _, in := range r.Divergent {
			for _, d := range in.Differences {
				detail := mdEscape(d.Message)
				if len(d.Assets) > 0 {
					detail += ": `" + strings.Join(d.Assets, "`, `") + "`"
				}
				fmt.Fprintf(b, "| `%s` | %s | %s |\n", mdEscape(in.Name), d.Kind, detail)
			}
		}
		b.WriteString("\n")
	}
	if len(r.Unreachable) > 0 {
		fmt.Fprintf(b, "### Unreachable\n\n| instance | problem | detail |\n| --- | --- | --- |\n")
		for _, in := range r.Unreachable {
			fmt.Fprintf(b, "| `%s` | %s | %s |\n", mdEscape(in.Name), in.Problem.Kind, mdEscape(in.Problem.Message))
		}
		b.WriteString("\n")
	}
	return b.Flush()
}

func matchWord(match bool) string {
	if match {
		return "match"
	}
	return "divergent"
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mdEscape keeps a value from breaking a markdown table.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}
