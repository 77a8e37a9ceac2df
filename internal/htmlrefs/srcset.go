package htmlrefs

// Srcset returns the URLs of a srcset attribute (also imagesrcset), as
// HTML's "parse a srcset attribute" splits it: leading white space and
// commas are skipped; a URL is the run of characters up to white space
// (a comma inside it is part of it; trailing commas end the candidate);
// its descriptors run up to a comma outside parentheses, where "("
// enters and ")" leaves a parenthesised part without nesting, as the
// standard's tokenizer does. A candidate whose descriptors a browser
// would reject (two densities, a width and a density) is kept: checking a
// file the browser skips costs a request, skipping one it loads would be
// a hole.
func Srcset(v string) []string {
	var out []string
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
	i := 0
	for {
		for i < len(v) && (isSpace(v[i]) || v[i] == ',') {
			i++
		}
		if i >= len(v) {
			return out
		}
		start := i
		for i < len(v) && !isSpace(v[i]) {
			i++
		}
		u := v[start:i]
		if u[len(u)-1] == ',' {
			for len(u) > 0 && u[len(u)-1] == ',' {
				u = u[:len(u)-1]
			}
			if u != "" {
				out = append(out, u)
			}
			continue
		}
		out = append(out, u)
		// The descriptor tokenizer, for where the candidate ends.
		inParens := false
	descriptors:
		for ; i < len(v); i++ {
			c := v[i]
			switch {
			case inParens:
				if c == ')' {
					inParens = false
				}
			case c == ',':
				i++
				break descriptors
			case c == '(':
				inParens = true
			}
		}
	}
}
