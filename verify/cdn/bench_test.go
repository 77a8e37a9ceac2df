package cdn

import (
	"context"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/transport"
)

// BenchmarkCheckNginx checks 2,000 assets on a loopback nginx per
// iteration (HEAD, 64 in flight); bench/cdn.sh measures the CLI on 10,000.
func BenchmarkCheckNginx(b *testing.B) {
	root, files := assetTree(b, 2000)
	base := testenv.Nginx(b, root, "open_file_cache max=5000;")
	a := assets(files, base)
	p := transport.DefaultPolicy()
	p.MaxConnsPerHost = 64
	client := transport.New(p)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep, err := Check(context.Background(), a, Options{Client: client, Concurrency: 64})
		if err != nil || rep.Err() != nil {
			b.Fatal(err, rep.Err())
		}
	}
	b.ReportMetric(float64(b.N*len(a.Files))/b.Elapsed().Seconds(), "assets/s")
}
