package manifest

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkParse10k(b *testing.B) {
	m := testManifest()
	var files []File
	for i := 0; i < 10000; i++ {
		files = append(files, File{Path: fmt.Sprintf("assets/chunk-%05d.js", i), Size: int64(i), SHA256: strings.Repeat("c", 64), ContentType: "text/javascript"})
	}
	m.Assets.Files = files
	m.Assets.Fingerprint = Fingerprint(files)
	raw, err := m.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckStructure10k(b *testing.B) {
	m := testManifest()
	var files []File
	for i := 0; i < 10000; i++ {
		files = append(files, File{Path: fmt.Sprintf("assets/chunk-%05d.js", i), Size: int64(i), SHA256: strings.Repeat("c", 64), ContentType: "text/javascript"})
	}
	m.Assets.Files = files
	m.Assets.Fingerprint = Fingerprint(files)
	raw, _ := m.Encode()
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := checkStructure(raw); err != nil {
			b.Fatal(err)
		}
	}
}
