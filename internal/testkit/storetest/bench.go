package storetest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// Bench runs the store benchmarks against st: Publish (store a manifest
// and move the channel), Fetch (what a booting consumer does: the pointer
// and the manifest it names, with its sidecars), and ContendedPublish
// (publishers in parallel, each taking the next generation, so that moves
// race and lose).
func Bench(b *testing.B, newStore func(b *testing.B) manifest.Store) {
	ctx := context.Background()
	b.Run("Publish", func(b *testing.B) {
		st := newStore(b)
		ms := manifests(b, b.N)
		b.ResetTimer()
		for i := range b.N {
			if _, err := store.Publish(ctx, st, ms[i], "production", "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Fetch", func(b *testing.B) {
		st := newStore(b)
		m := Signed(Manifest(b, "web", 1, ""))
		if _, err := store.Publish(ctx, st, m, "production", "bench"); err != nil {
			b.Fatal(err)
		}
		src := store.ChannelSource{Store: st, Release: "web", Channel: "production"}
		b.ResetTimer()
		for range b.N {
			if _, err := src.Fetch(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ContendedPublish", func(b *testing.B) {
		st := newStore(b)
		ms := manifests(b, b.N+64)
		var next, refused atomic.Int64
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m := ms[next.Add(1)-1]
				_, err := store.Publish(ctx, st, m, "production", "bench")
				var ge *manifest.GenerationError
				switch {
				case errors.As(err, &ge):
					refused.Add(1)
				case err != nil:
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/op")
	})
}

func manifests(b *testing.B, n int) []*manifest.Signed {
	out := make([]*manifest.Signed, n)
	for i := range out {
		out[i] = Manifest(b, "web", int64(i+1), "")
	}
	return out
}
