package registry

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkPinAll pins 100 tags of the in-memory registry, with no cache
// (two requests a tag) and with a warm one (one request a tag).
func BenchmarkPinAll(b *testing.B) {
	host := memRegistry(b)
	var reqs []Request
	for i := range 100 {
		ref := fmt.Sprintf("%s/app:t%d", host, i)
		pushImage(b, ref, "linux", "amd64")
		reqs = append(reqs, Request{Ref: ref})
	}
	for _, cache := range []bool{false, true} {
		b.Run(fmt.Sprintf("cache=%v", cache), func(b *testing.B) {
			opt := fastOptions()
			if cache {
				opt.Cache = b.TempDir()
				if _, err := PinAll(context.Background(), reqs, opt); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if _, err := PinAll(context.Background(), reqs, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/100, "µs/tag")
		})
	}
}
