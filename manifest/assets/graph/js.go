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
// every other string literal and template literal without substitutions
// (Vite's preload lists, webpack's chunk tables). The resolver keeps the
// ones that name a file of the manifest. It parses the code into a tree
// (github.com/tdewolff/parse/v2/js, ECMAScript 2020+), which tells a
// regular expression from a division as a browser does; code the parser
// refuses (syntax newer than it knows) is read with the lexer alone
// (jsLexStrings). ok is false when the parser refused it.
func jsStrings(src []byte) (out []string, parsed bool) {
	ast, err := js.Parse(parse.NewInputBytes(src), js.Options{})
	if err != nil {
		return jsLexStrings(src), false
	}
	v := &stringVisitor{}
	js.Walk(v, ast)
	return v.out, true
}

type stringVisitor struct{ out []string }

func (v *stringVisitor) add(s string) {
	if candidate(s) {
		v.out = append(v.out, s)
	}
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
			if s := jsUnquote(data); candidate(s) {
				out = append(out, s)
			}
		case js.TemplateToken:
			if s := templateText(data); candidate(s) {
				out = append(out, s)
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
// empty, not long, no white space or control characters.
func candidate(s string) bool {
	if len(s) < 3 || len(s) > 2048 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// templateText is the text of a template literal without substitutions.
func templateText(tok []byte) string {
	s := strings.TrimPrefix(string(tok), "`")
	s = strings.TrimSuffix(s, "`")
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
