package graph

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The JavaScript readers measured on the fixtures' bundles and on a large
// bundle (the Vite legacy bundle, 141 KB, twenty times over, each copy in
// its own function: 2.8 MB): the parser (jsStrings, the one Build uses)
// beside the lexer alone (jsLexStrings, its fallback). bench/run.sh runs
// them; docs/benchmarks.md has the figures.
func jsInputs(b *testing.B) map[string][]byte {
	b.Helper()
	in := map[string][]byte{}
	for _, name := range []string{"vite-react/dist/assets/index-B4TPZJfM.js", "webpack/dist/js/main.8fce7357.js"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "web", filepath.FromSlash(name)))
		if err != nil {
			b.Fatal(err)
		}
		in[filepath.Base(name)] = data
	}
	legacy, err := os.ReadFile(filepath.Join(fixtureDir("vite-react"), "assets", "index-legacy-BJUse8hi.js"))
	if err != nil {
		b.Fatal(err)
	}
	var large bytes.Buffer
	for range 20 {
		large.WriteString("(function(){\n")
		large.Write(legacy)
		large.WriteString("\n})();\n")
	}
	in["large-2.8MB"] = large.Bytes()
	return in
}

func BenchmarkJSStrings(b *testing.B) {
	for name, data := range jsInputs(b) {
		b.Run("parser/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, ok := jsStrings(bytes.Clone(data)); !ok {
					b.Fatal("the parser refused it")
				}
			}
		})
		b.Run("lexer/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				jsLexStrings(bytes.Clone(data))
			}
		})
	}
}
