package htmlrefs

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The namespaces an SVG file's elements and attributes are read in.
const (
	nsSVG   = "http://www.w3.org/2000/svg"
	nsXHTML = "http://www.w3.org/1999/xhtml"
	nsXLink = "http://www.w3.org/1999/xlink"
)

// maxDepth bounds the nesting of an SVG file's elements read.
const maxDepth = 512

// SVG reads an SVG file (image/svg+xml) with an XML parser, as a browser
// does (namespace prefixes resolved, CDATA read), into the same tree the
// HTML table reads: SVG elements' href and xlink:href (image, use,
// script, feImage), <style> and style attributes through the CSS
// tokenizer, the presentation attributes that take url(), and the HTML
// of a foreignObject. The Doc holds what was read up to an error; the
// error says the file is not well-formed XML (a browser renders such a
// file up to the error, or not at all): the caller reports it.
func SVG(data []byte) (*Doc, error) {
	root := &html.Node{Type: html.DocumentNode}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	cur := root
	depth := 0
	var err error
	for {
		var tok xml.Token
		tok, err = d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxDepth {
				err = errors.New("elements nested too deep")
				break
			}
			n := &html.Node{Type: html.ElementNode, Data: t.Name.Local}
			switch t.Name.Space {
			case nsSVG:
				n.Namespace = "svg"
			case nsXHTML:
				n.DataAtom = atom.Lookup([]byte(t.Name.Local))
			default:
				n.Namespace = "other"
			}
			for _, a := range t.Attr {
				switch a.Name.Space {
				case "":
					n.Attr = append(n.Attr, html.Attribute{Key: a.Name.Local, Val: a.Value})
				case nsXLink:
					n.Attr = append(n.Attr, html.Attribute{Namespace: "xlink", Key: a.Name.Local, Val: a.Value})
				}
			}
			cur.AppendChild(n)
			cur = n
		case xml.EndElement:
			depth--
			if cur.Parent != nil {
				cur = cur.Parent
			}
		case xml.CharData:
			cur.AppendChild(&html.Node{Type: html.TextNode, Data: string(t)})
		}
		if err != nil {
			break
		}
	}
	doc := Extract(root)
	if errors.Is(err, io.EOF) {
		if depth != 0 || root.FirstChild == nil {
			return doc, errors.New("not a whole XML document")
		}
		return doc, nil
	}
	return doc, err
}
