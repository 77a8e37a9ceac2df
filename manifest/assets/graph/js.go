package graph

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// jsStrings returns the string values a piece of JavaScript holds that may
// name a file: module specifiers (import and export … from, import()),
// the first argument of new URL(…, import.meta.url), new Worker(…),
// importScripts(…), SystemJS's System.register([…]) and import(…), and
// every other string literal and template literal (Vite's preload lists,
// webpack's chunk tables); of a template literal with substitutions, the
// fixed text before the first one when it ends in a query or fragment
// (`/assets/a-1f3c.js?v=${v}`: the file is fixed, the query is not).
// A string that holds a stylesheet (Angular's component styles, CSS in
// JS) gives the url()s and @imports the CSS tokenizer finds in it, not
// itself. The resolver keeps the ones that name a file of the manifest.
// It parses the code into a tree (github.com/tdewolff/parse/v2/js,
// ECMAScript 2020+), which tells a regular expression from a division as
// a browser does; code the parser refuses (syntax newer than it knows) is
// read with the lexer alone (jsLexStrings). ok is false when the parser
// refused it.
func jsStrings(src []byte) (out []string, parsed bool) {
	r, parsed := jsRead(src)
	return r.strings, parsed
}

// jsRefs is what jsRead finds in a script.
type jsRefs struct {
	// strings are jsStrings's.
	strings []string
	// bases are the string values assigned to a bundle runtime's public
	// path (webpack's __webpack_require__.p, minified r.p, and
	// __webpack_public_path__): the folder the runtime joins its chunk
	// names to ("/static/", "https://cdn.example/_next/").
	bases []string
}

// jsRead is jsStrings with the runtime's public paths.
func jsRead(src []byte) (jsRefs, bool) {
	ast, err := js.Parse(parse.NewInputBytes(src), js.Options{})
	if err != nil {
		return jsRefs{strings: jsLexStrings(src)}, false
	}
	v := &stringVisitor{}
	js.Walk(v, ast)
	return jsRefs{strings: v.out, bases: v.bases}, true
}

type stringVisitor struct{ out, bases []string }

func (v *stringVisitor) add(s string) {
	v.out = addString(v.out, s)
}

// addString appends s to out if it may name a file, or what a
// stylesheet in s loads.
func addString(out []string, s string) []string {
	if looksLikeCSS(s) {
		for _, u := range cssRefs([]byte(s)) {
			if candidate(u) {
				out = append(out, u)
			}
		}
		return out
	}
	if candidate(s) {
		out = append(out, s)
	}
	return out
}

func (v *stringVisitor) Enter(n js.INode) js.IVisitor {
	switch n := n.(type) {
	case *js.LiteralExpr:
		if n.TokenType == js.StringToken {
			v.add(jsUnquote(n.Data))
		}
	case *js.TemplateExpr:
		if len(n.List) == 0 {
			v.add(templateText(n.Tail))
			break
		}
		if head, ok := templateHead(n.List[0].Value); ok {
			v.add(head)
		}
		for _, p := range n.List {
			if s := templateText(p.Value); looksLikeCSS(s) {
				v.add(s)
			}
		}
		if s := templateText(n.Tail); looksLikeCSS(s) {
			v.add(s)
		}
	case *js.BinaryExpr:
		if n.Op == js.EqToken && isPublicPath(n.X) {
			if l, ok := n.Y.(*js.LiteralExpr); ok && l.TokenType == js.StringToken {
				v.bases = append(v.bases, jsUnquote(l.Data))
			}
		}
	case *js.ImportStmt:
		if n.Module != nil {
			v.add(jsUnquote(n.Module))
		}
	case *js.ExportStmt:
		if n.Module != nil {
			v.add(jsUnquote(n.Module))
		}
	}
	return v
}

func (v *stringVisitor) Exit(js.INode) {}

// isPublicPath says whether x is a webpack runtime's public path:
// __webpack_public_path__, or a member named p (__webpack_require__.p,
// minified to r.p).
func isPublicPath(x js.IExpr) bool {
	switch x := x.(type) {
	case *js.Var:
		return string(x.Data) == "__webpack_public_path__"
	case *js.DotExpr:
		switch y := x.Y.(type) {
		case js.LiteralExpr:
			return string(y.Data) == "p"
		case *js.LiteralExpr:
			return string(y.Data) == "p"
		}
	}
	return false
}

// templateHead is the fixed text of a template literal before its first
// substitution (the head token "`…${"), when that text holds a query or
// a fragment: the path before it is then fixed, and only the query or
// fragment is computed. Without "?" or "#" the substitution may be part
// of the path, and nothing is taken.
func templateHead(tok []byte) (string, bool) {
	s := templateText(tok)
	if !strings.ContainsAny(s, "?#") {
		return "", false
	}
	return s, true
}

// looksLikeCSS says whether a string holds CSS that loads something: a
// url(), an @import or an image-set(). Its URLs are read with the CSS
// tokenizer, as the browser reads the stylesheet the script inserts.
func looksLikeCSS(s string) bool {
	return len(s) >= 6 && (strings.Contains(s, "url(") || strings.Contains(s, "@import") || strings.Contains(s, "image-set("))
}

// jsLexStrings is jsStrings with the lexer alone: a "/" is read as the
// start of a regular expression where an expression may begin (after an
// operator, an opening bracket, a comma or semicolon, a keyword such as
// return, or at the start), as a division after a value.
func jsLexStrings(src []byte) []string {
	l := js.NewLexer(parse.NewInputBytes(src))
	var out []string
	regexpOK := true
	for {
		tt, data := l.Next()
		switch tt {
		case js.ErrorToken:
			return out
		case js.WhitespaceToken, js.LineTerminatorToken, js.CommentToken, js.CommentLineTerminatorToken:
			continue
		case js.StringToken:
			out = addString(out, jsUnquote(data))
		case js.TemplateToken:
			out = addString(out, templateText(data))
		case js.TemplateStartToken:
			if head, ok := templateHead(data); ok {
				out = addString(out, head)
			}
			if s := templateText(data); looksLikeCSS(s) {
				out = addString(out, s)
			}
		case js.TemplateMiddleToken, js.TemplateEndToken:
			if s := templateText(data); looksLikeCSS(s) {
				out = addString(out, s)
			}
		case js.DivToken, js.DivEqToken:
			if regexpOK {
				tt, _ = l.RegExp()
			}
		}
		regexpOK = expressionMayFollow(tt)
	}
}

// expressionMayFollow says whether an expression (so a regular
// expression literal) may start after a token of type tt.
func expressionMayFollow(tt js.TokenType) bool {
	if js.IsNumeric(tt) || js.IsIdentifier(tt) {
		return false
	}
	switch tt {
	case js.StringToken, js.TemplateToken, js.TemplateEndToken, js.RegExpToken, js.PrivateIdentifierToken,
		js.CloseParenToken, js.CloseBracketToken, js.CloseBraceToken,
		js.ThisToken, js.SuperToken, js.TrueToken, js.FalseToken, js.NullToken, js.IncrToken, js.DecrToken:
		return false
	}
	return true
}

// candidate says whether a string could be a reference to a file: not
// empty, not long, no control characters and no white space but single
// spaces inside it (a file name may hold a space, which a URL writes as
// %20: the resolver takes both forms). A string with a space names a file
// only with a "." or "/" in it: "use strict" is a directive, and most
// text a script shows is no path.
func candidate(s string) bool {
	if len(s) < 3 || len(s) > 2048 {
		return false
	}
	if strings.IndexByte(s, ' ') >= 0 && (s[0] == ' ' || s[len(s)-1] == ' ' || strings.Contains(s, "  ") || !strings.ContainsAny(s, "./")) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// templateText is the text of a template literal's token: a whole one
// without substitutions, or a part ("`…${", "}…${", "}…`").
func templateText(tok []byte) string {
	s := string(tok)
	if t, ok := strings.CutPrefix(s, "`"); ok {
		s = t
	} else {
		s = strings.TrimPrefix(s, "}")
	}
	if t, ok := strings.CutSuffix(s, "`"); ok {
		s = t
	} else {
		s = strings.TrimSuffix(s, "${")
	}
	if strings.Contains(s, `\`) {
		return unescapeJS(s)
	}
	return s
}

// jsUnquote is the value of a string literal token.
func jsUnquote(tok []byte) string {
	s := string(tok)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	if strings.Contains(s, `\`) {
		return unescapeJS(s)
	}
	return s
}

// unescapeJS resolves a string literal's escapes: \n and friends, \xHH,
// \uHHHH, \u{H…}, a line continuation, and \ before any other character.
func unescapeJS(s string) string {
	var b strings.Builder
	simple := map[byte]string{'n': "\n", 't': "\t", 'r': "\r", 'b': "\b", 'f': "\f", 'v': "\v", '0': "\x00", '\n': "", '\r': ""}
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 || i+1 >= len(s) {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		e, rest := s[i+1], s[i+2:]
		s = rest
		if v, ok := simple[e]; ok {
			b.WriteString(v)
			if e == '\r' {
				s = strings.TrimPrefix(s, "\n")
			}
			continue
		}
		var r rune
		var n int
		switch {
		case e == 'x':
			r, n = hexRune(rest, 2)
		case e == 'u' && strings.HasPrefix(rest, "{"):
			if j := strings.IndexByte(rest, '}'); j > 1 {
				if r, n = hexRune(rest[1:j], j-1); n > 0 {
					n = j + 1
				}
			}
		case e == 'u':
			r, n = hexRune(rest, 4)
		}
		if n > 0 {
			b.WriteRune(r)
			s = rest[n:]
			continue
		}
		b.WriteByte(e)
	}
}

// hexRune reads exactly n hex digits at the start of s.
func hexRune(s string, n int) (rune, int) {
	if len(s) < n || n > 8 {
		return 0, 0
	}
	v, err := strconv.ParseUint(s[:n], 16, 32)
	if err != nil || v > utf8.MaxRune {
		return 0, 0
	}
	return rune(v), n
}
