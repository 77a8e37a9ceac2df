package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// podSpecPaths are where each Kubernetes kind keeps its pod spec.
var podSpecPaths = map[string][]string{
	"Pod":                   {"spec"},
	"PodTemplate":           {"template", "spec"},
	"Deployment":            {"spec", "template", "spec"},
	"ReplicaSet":            {"spec", "template", "spec"},
	"StatefulSet":           {"spec", "template", "spec"},
	"DaemonSet":             {"spec", "template", "spec"},
	"Job":                   {"spec", "template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template", "spec"},
}

var containerLists = []string{"initContainers", "containers", "ephemeralContainers"}

// yamlRefs finds the image references of every document of a Kubernetes
// or compose file.
func yamlRefs(data []byte) ([]ref, error) {
	lines := lineStarts(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var nodes []*yaml.Node
	for n := 1; ; n++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(doc.Content) == 0 {
			continue // an empty document
		}
		root := doc.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue
		}
		if root.Kind != yaml.MappingNode {
			return nil, &lineError{root.Line, fmt.Errorf("document %d is not a mapping", n)}
		}
		found, err := documentImages(root)
		if err != nil {
			return nil, &lineError{root.Line, fmt.Errorf("document %d: %w", n, err)}
		}
		nodes = append(nodes, found...)
	}
	var refs []ref
	for _, n := range nodes {
		r, ok, err := locate(data, lines, n)
		if err != nil {
			return nil, &lineError{n.Line, err}
		}
		if ok {
			refs = append(refs, r)
		}
	}
	return refs, nil
}

// documentImages returns the image scalars of one document: Kubernetes
// (apiVersion and kind) or compose (services).
func documentImages(root *yaml.Node) ([]*yaml.Node, error) {
	kind, hasKind := scalar(root, "kind")
	_, hasAPI := scalar(root, "apiVersion")
	if hasKind && hasAPI {
		return kubeImages(root, kind)
	}
	if services := get(root, "services"); services != nil {
		return composeImages(services)
	}
	return nil, errors.New("neither a Kubernetes object (apiVersion, kind) nor a compose file (services)")
}

func kubeImages(obj *yaml.Node, kind string) ([]*yaml.Node, error) {
	if strings.HasSuffix(kind, "List") {
		items := get(obj, "items")
		if items == nil {
			return nil, nil
		}
		if items.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("line %d: items is not a list", items.Line)
		}
		var out []*yaml.Node
		for _, it := range items.Content {
			it = deref(it)
			if it == nil || it.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: an item is not an object", it.Line)
			}
			k, _ := scalar(it, "kind")
			found, err := kubeImages(it, k)
			if err != nil {
				return nil, err
			}
			out = append(out, found...)
		}
		return out, nil
	}
	path, known := podSpecPaths[kind]
	if !known {
		path = []string{"spec", "template", "spec"} // Argo Rollouts, Knative, and other workloads
	}
	spec := obj
	for _, k := range path {
		if spec = get(spec, k); spec == nil {
			return nil, nil
		}
	}
	if spec.Kind != yaml.MappingNode {
		if known {
			return nil, fmt.Errorf("line %d: %s is not an object", spec.Line, strings.Join(path, "."))
		}
		return nil, nil
	}
	var out []*yaml.Node
	for _, list := range containerLists {
		cs := get(spec, list)
		if cs == nil {
			continue
		}
		if cs.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("line %d: %s is not a list", cs.Line, list)
		}
		for _, c := range cs.Content {
			c = deref(c)
			if c == nil || c.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: a container of %s is not an object", c.Line, list)
			}
			if img := get(c, "image"); img != nil {
				out = append(out, img)
			}
		}
	}
	return out, nil
}

func composeImages(services *yaml.Node) ([]*yaml.Node, error) {
	if services.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: services is not a mapping", services.Line)
	}
	var out []*yaml.Node
	for i := 1; i < len(services.Content); i += 2 {
		svc := deref(services.Content[i])
		if svc == nil || svc.Kind != yaml.MappingNode {
			if svc.Kind == yaml.ScalarNode && svc.Tag == "!!null" {
				continue
			}
			return nil, fmt.Errorf("line %d: service %s is not a mapping", svc.Line, services.Content[i-1].Value)
		}
		if img := get(svc, "image"); img != nil {
			out = append(out, img)
		}
	}
	return out, nil
}

// get returns the value of key in a mapping (through aliases), or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if v := m.Content[i+1]; v.Kind == yaml.AliasNode && v.Alias != nil && v.Alias.Kind != yaml.ScalarNode {
				return deref(v)
			}
			return m.Content[i+1]
		}
	}
	return nil
}

// deref follows a chain of aliases to the anchored node.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func scalar(m *yaml.Node, key string) (string, bool) {
	v := get(m, key)
	if v == nil || v.Kind != yaml.ScalarNode {
		return "", false
	}
	return v.Value, true
}

// locate finds the source bytes of an image scalar from its line and
// column. Aliases, block scalars and empty or tagged values are left alone
// (ok false); a plain or quoted scalar whose text cannot be found where
// the parser says is an error.
func locate(data []byte, lines []int, n *yaml.Node) (ref, bool, error) {
	if n.Kind != yaml.ScalarNode || n.Value == "" ||
		n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || (n.Tag != "" && n.Tag != "!!str") {
		return ref{}, false, nil
	}
	if n.Line < 1 || n.Line > len(lines) {
		return ref{}, false, fmt.Errorf("image %q: line %d out of range", n.Value, n.Line)
	}
	lineEnd := len(data)
	if n.Line < len(lines) {
		lineEnd = lines[n.Line]
	}
	// The column counts characters, not bytes.
	off := lines[n.Line-1]
	for c := 1; c < n.Column && off < lineEnd; c++ {
		_, w := utf8.DecodeRune(data[off:])
		off += w
	}
	r := ref{value: n.Value, line: n.Line}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		r.quote = '"'
	case n.Style&yaml.SingleQuotedStyle != 0:
		r.quote = '\''
	}
	if r.quote == 0 {
		i := bytes.Index(data[off:lineEnd], []byte(n.Value))
		if i < 0 {
			return ref{}, false, fmt.Errorf("image %q: a plain scalar over several lines cannot be rewritten in place; write it on one line", n.Value)
		}
		r.start, r.end = off+i, off+i+len(n.Value)
		return r, true, nil
	}
	i := bytes.IndexByte(data[off:lineEnd], r.quote)
	if i < 0 {
		return ref{}, false, fmt.Errorf("image %q: quote not found", n.Value)
	}
	r.start = off + i
	end, err := quotedEnd(data, r.start, r.quote)
	if err != nil {
		return ref{}, false, fmt.Errorf("image %q: %v", n.Value, err)
	}
	r.end = end
	// Only rewrite a quoted scalar that is literally its value (no
	// escapes, one line): anything else is left alone.
	if string(data[r.start+1:r.end-1]) != n.Value {
		return ref{}, false, nil
	}
	return r, true, nil
}

// quotedEnd returns the offset just past the quoted scalar at start.
func quotedEnd(data []byte, start int, q byte) (int, error) {
	for i := start + 1; i < len(data); i++ {
		switch {
		case q == '"' && data[i] == '\\':
			i++
		case data[i] == q && q == '\'' && i+1 < len(data) && data[i+1] == '\'':
			i++
		case data[i] == q:
			return i + 1, nil
		}
	}
	return 0, errors.New("unterminated quoted scalar")
}

// lineStarts returns the offset of the first byte of each line.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 <= len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func doubleQuote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
