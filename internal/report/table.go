package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table is a table of strings, written as Markdown (GitHub-flavoured) or
// as aligned plain text.
type Table struct {
	Header []string
	Rows   [][]string
}

// NewTable returns a table with the given column headings.
func NewTable(header ...string) *Table { return &Table{Header: header} }

// Row appends a row; missing cells are empty, extra ones are dropped.
func (t *Table) Row(cells ...string) {
	row := make([]string, len(t.Header))
	copy(row, cells)
	t.Rows = append(t.Rows, row)
}

// Markdown writes the table as a GitHub-flavoured Markdown table. Cells
// are written as given, newlines aside: build them with Cell (text) or
// Code (inline code) so that no value can break the table.
func (t *Table) Markdown(w io.Writer) error {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(c) + " |")
		}
		b.WriteString("\n")
	}
	line(t.Header)
	b.WriteString("|")
	for range t.Header {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Text writes the table as plain text in aligned columns.
func (t *Table) Text(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// Cell escapes s for a Markdown table cell: pipes, backslashes and the
// characters that would start HTML or emphasis are escaped, and newlines
// become spaces, so that no value can break the table or inject markup.
func Cell(s string) string {
	return cellEscaper.Replace(s)
}

var cellEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "\r\n", " ", "\n", " ", "\r", " ",
	"<", "&lt;", ">", "&gt;", "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
)

// Code formats s as inline code in Markdown, safe in a table cell.
func Code(s string) string {
	s = strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
	return "`" + s + "`"
}
