package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/s3store"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
)

// storeURLFlag is --store, required by the store's own commands.
func storeURLFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "store", Usage: "the manifest store: file:///DIR, a directory, or s3://BUCKET/PREFIX", EnvVars: []string{"LOCKSTEP_STORE"}, Required: true}
}

func storeChannelFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "channel", Value: store.DefaultChannel, Usage: "the channel", EnvVars: []string{"LOCKSTEP_CHANNEL"}}
}

func storeReleaseFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "release", Usage: "the release name", EnvVars: []string{"LOCKSTEP_RELEASE"}, Required: true}
}

// storeFlags are --store (optional here) and --channel, for a command
// that can read a store without being a consumer (record --generation
// auto).
func storeFlags() []cli.Flag {
	url := storeURLFlag()
	url.Required = false
	return []cli.Flag{url, storeChannelFlag()}
}

// openStore builds the Store a --store URL names. An s3:// store uses the
// AWS SDK's own configuration (AWS_REGION, the credential chain,
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL), sends on internal/transport and
// retries under its policy; path-style addressing is used when an endpoint
// is configured (S3-compatible servers), unless LOCKSTEP_S3_PATH_STYLE says
// otherwise. Anything else is a directory (file:///DIR or a path). The URL
// is parsed (store.ParseURL) before anything is built or contacted: a bad
// one is a usage error, exit 2.
func openStore(ctx context.Context, url string, log *slog.Logger) (manifest.Store, error) {
	return openStoreWith(ctx, url, log, nil)
}

// openStoreWith is openStore with an s3:// store sending on client (nil:
// a client of its own), so that a consumer's requests and TLS report
// include the store's.
func openStoreWith(ctx context.Context, url string, log *slog.Logger, client *transport.Client) (manifest.Store, error) {
	u, err := store.ParseURL(url)
	if err != nil {
		return nil, usage(err)
	}
	if u.Scheme == "s3" {
		api, err := newS3Client(ctx, client)
		if err != nil {
			return nil, err
		}
		return s3store.New(api, u.Bucket, u.Prefix, s3store.WithLogger(log))
	}
	return filestore.New(u.Dir, filestore.WithLogger(log))
}

// newS3Client is the one place the real S3 client is built. It sends on
// tc, or with tc nil on a client of its own that trusts the SDK's CA
// bundle.
func newS3Client(ctx context.Context, tc *transport.Client) (*s3.Client, error) {
	policy := transport.DefaultPolicy()
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRetryer(func() aws.Retryer { return s3store.Retryer(policy) }),
	)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	// The SDK applies a CA bundle (AWS_CA_BUNDLE, ca_bundle) to its own
	// client; carry its TLS roots over to ours.
	if tc == nil {
		var opts []transport.Option
		if bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
			if tls := bc.GetTransport().TLSClientConfig; tls != nil && tls.RootCAs != nil {
				opts = append(opts, transport.WithTLSConfig(tls.Clone()))
			}
		}
		tc = transport.New(policy, opts...)
	}
	cfg.HTTPClient = &http.Client{Transport: tc.Transport()}
	custom := os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != "" || cfg.BaseEndpoint != nil
	pathStyle := custom
	if v := os.Getenv("LOCKSTEP_S3_PATH_STYLE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, usage(fmt.Errorf("LOCKSTEP_S3_PATH_STYLE=%q: want true or false", v))
		}
		pathStyle = b
	}
	if cfg.Region == "" && custom {
		// S3-compatible servers ignore the region, but the SDK signs with one.
		cfg.Region = "us-east-1"
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = pathStyle }), nil
}

// channelSourceFromFlags is the store branch of sourceFromFlags; an
// s3:// store sends on client (nil: its own).
func channelSourceFromFlags(c *cli.Context, url string, client *transport.Client) (manifest.Source, error) {
	release := c.String("release")
	if release == "" {
		return nil, usage(fmt.Errorf("--store needs --release NAME"))
	}
	if err := manifest.ValidateName(release); err != nil {
		return nil, usage(fmt.Errorf("--release: %w", err))
	}
	st, err := openStoreWith(c.Context, url, logger(c), client)
	if err != nil {
		return nil, err
	}
	return store.ChannelSource{Store: st, Release: release, Channel: c.String("channel"), Name: url}, nil
}

// stateFlags are the trusted-state flags of every consumer.
func stateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "state-dir", Value: trusted.DefaultDir, Usage: "where the trusted state (the highest generation accepted per release) is kept", EnvVars: []string{"LOCKSTEP_STATE_DIR"}},
		&cli.DurationFlag{Name: "max-age", Usage: "when the store is unreachable, accept the last accepted manifest if it was accepted at most this long ago (0: refuse)", EnvVars: []string{"LOCKSTEP_MAX_AGE"}},
	}
}

// trustedSourceFromFlags is where the source flags and the state flags
// become a consumer's manifest source and trusted state: the source the
// flags name (sourceFromFlags), wrapped for the --max-age fallback to the
// state's cache, and the state, which the consumer hands to admission.Check
// as its Guard (Check refuses a rollback, Accept records an admission).
// A manifest URL is fetched through client.
func trustedSourceFromFlags(c *cli.Context, client *transport.Client) (*trusted.Source, *trusted.State, error) {
	if c.Duration("max-age") < 0 {
		return nil, nil, usage(fmt.Errorf("--max-age must not be negative"))
	}
	if c.Duration("max-age") > 0 && c.String("store") == "" {
		return nil, nil, usage(fmt.Errorf("--max-age needs --store URL --release NAME: it bounds the cache of a store's channel"))
	}
	src, err := sourceWithClient(c, client)
	if err != nil {
		return nil, nil, err
	}
	st, err := trusted.Open(c.String("state-dir"))
	if err == nil {
		err = st.Writable()
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, nil, usage(fmt.Errorf("--state-dir %s: %w: run as a user who may write it, or give --state-dir (or LOCKSTEP_STATE_DIR) a directory this user owns",
			c.String("state-dir"), err))
	}
	if err != nil {
		return nil, nil, unverified(err)
	}
	return &trusted.Source{Upstream: src, State: st, Release: c.String("release"), MaxAge: c.Duration("max-age"), Logger: logger(c)}, st, nil
}

// autoGeneration is `record --generation auto`: the next generation of
// release on the store and channel of storeFlags.
func autoGeneration(c *cli.Context, release string) (int64, error) {
	url := c.String("store")
	if url == "" {
		return 0, usage(fmt.Errorf("--generation auto needs --store URL"))
	}
	st, err := openStore(c.Context, url, logger(c))
	if err != nil {
		return 0, err
	}
	return store.NextGeneration(c.Context, st, release, c.String("channel"))
}
