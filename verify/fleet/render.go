package fleet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/report"
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
	if s.Agentless > 0 {
		fmt.Fprintf(b, "  %d read from an orchestrator without an agent: their served assets are not visible, not checked\n", s.Agentless)
	}
	if len(r.Groups) > 0 {
		fmt.Fprintf(b, "groups:\n")
		for _, g := range r.Groups {
			if g.Agentless {
				fmt.Fprintf(b, "  %6d  %-9s running %s  assets not visible (agentless)\n", g.Count, matchWord(g.Match), orNone(g.Running))
				continue
			}
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

// section is a markdown table under an optional heading.
type section struct {
	title string
	t     *report.Table
}

// WriteMarkdown writes the report as GitHub-flavoured markdown, for a job
// summary: the counts, the groups, the divergent and the unreachable
// instances.
func (r *Report) WriteMarkdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	s := r.Summary
	icon := map[string]string{ResultMatch: "✅", ResultDivergent: "❌", ResultUnverified: "⚠️"}[s.Result]
	fmt.Fprintf(b, "## %s Fleet check: %s@%d is %s\n\nManifest %s.\n\n", icon, report.Cell(r.Manifest.Release), r.Manifest.Generation, s.Result, report.Code(r.Manifest.Digest))
	counts := report.NewTable("instances", "run the release exactly", "divergent", "unreachable (allowed)")
	counts.Row(fmt.Sprint(s.Instances), fmt.Sprint(s.Match), fmt.Sprint(s.Divergent), fmt.Sprintf("%d (%d)", s.Unreachable, s.UnreachableAllowed))
	tables := []section{{"", counts}}
	if len(r.Groups) > 0 {
		t := report.NewTable("instances", "", "running digest", "served-asset fingerprint", "generation")
		for _, g := range r.Groups {
			fp, gen := report.Code(orNone(g.Fingerprint)), fmt.Sprint(g.Generation)
			if g.Agentless {
				fp, gen = "not visible (agentless)", "-"
			}
			t.Row(fmt.Sprint(g.Count), matchWord(g.Match), report.Code(orNone(g.Running)), fp, gen)
		}
		tables = append(tables, section{"Groups", t})
	}
	if len(r.Divergent) > 0 {
		t := report.NewTable("instance", "difference", "detail")
		for _, in := range r.Divergent {
			for _, d := range in.Differences {
				detail := report.Cell(d.Message)
				for i, a := range d.Assets {
					sep := ", "
					if i == 0 {
						sep = ": "
					}
					detail += sep + report.Code(a)
				}
				t.Row(report.Code(in.Name), d.Kind, detail)
			}
		}
		tables = append(tables, section{"Divergent", t})
	}
	if len(r.Unreachable) > 0 {
		t := report.NewTable("instance", "problem", "detail")
		for _, in := range r.Unreachable {
			t.Row(report.Code(in.Name), in.Problem.Kind, report.Cell(in.Problem.Message))
		}
		tables = append(tables, section{"Unreachable", t})
	}
	for _, tb := range tables {
		if tb.title != "" {
			fmt.Fprintf(b, "### %s\n\n", tb.title)
		}
		if err := tb.t.Markdown(b); err != nil {
			return err
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
