package app

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/internal/transport/awsretry"
)

// This file and invocation.go are where flags become clients, as ctr's
// NewClient: the shared transport (invocation.client), the one AWS
// configuration (awsConfig), the one S3 client (newS3Client) and the one
// store opener (invocation.openStore). Commands build their clients there
// and nowhere else.

// caBundle is AWS_CA_BUNDLE's certificates, to be trusted with the system's
// roots, as the AWS SDK would trust them.
type caBundle struct {
	// roots is the system's roots and the bundle's, parsed on the first
	// call (the first TLS request of any client given the bundle: parsing
	// every system root costs milliseconds, which a boot gate whose
	// requests are plain http would pay for nothing), then shared.
	roots func() *x509.CertPool
}

// awsCABundle is AWS_CA_BUNDLE, for the clients of a command that reaches
// AWS APIs; nil when it is not set. An unreadable bundle, or one that holds
// no PEM certificate, is a usage error, found when the command starts.
func awsCABundle() (*caBundle, error) {
	bundle := os.Getenv("AWS_CA_BUNDLE")
	if bundle == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(bundle)
	if err != nil {
		return nil, usage(fmt.Errorf("AWS_CA_BUNDLE: %w", err))
	}
	if !holdsCertificate(pem) {
		return nil, usage(fmt.Errorf("AWS_CA_BUNDLE %s holds no PEM certificate", bundle))
	}
	return &caBundle{roots: sync.OnceValue(func() *x509.CertPool {
		roots := transport.SystemRoots()
		if roots == nil {
			var err error
			if roots, err = x509.SystemCertPool(); err != nil {
				roots = x509.NewCertPool()
			}
		}
		roots.AppendCertsFromPEM(pem)
		return roots
	})}, nil
}

// holdsCertificate reports whether x509.CertPool.AppendCertsFromPEM would
// add a certificate of data, parsing only up to the first it would add.
func holdsCertificate(data []byte) bool {
	for len(data) > 0 {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return false
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err == nil {
			return true
		}
	}
	return false
}

// awsConfig is the one AWS configuration: the SDK's own (AWS_REGION, the
// credential chain, AWS_ENDPOINT_URL*, AWS_CA_BUNDLE or ca_bundle), with
// every request sent on client and retried under its policy. A nil client
// is one of its own, with the default policy, that trusts the SDK's CA
// bundle. When AWS_CA_BUNDLE is set the SDK refuses a custom HTTP client at
// load time (it wants to add the bundle itself), so client is set after
// loading: a given client must already trust the bundle (awsCABundle).
func awsConfig(ctx context.Context, client *transport.Client, opts ...func(*awsconfig.LoadOptions) error) (aws.Config, error) {
	policy := transport.DefaultPolicy()
	if client != nil {
		policy = client.Policy()
		if os.Getenv("AWS_CA_BUNDLE") == "" {
			opts = append(opts, awsconfig.WithHTTPClient(&http.Client{Transport: client.Transport()}))
		}
	}
	opts = append(opts, awsconfig.WithRetryer(func() aws.Retryer { return awsretry.New(policy) }))
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if client == nil {
		// The SDK applies a CA bundle (AWS_CA_BUNDLE, ca_bundle) to its own
		// client; carry its TLS roots over to ours.
		var topts []transport.Option
		if bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
			if tls := bc.GetTransport().TLSClientConfig; tls != nil && tls.RootCAs != nil {
				topts = append(topts, transport.WithTLSConfig(tls.Clone()))
			}
		}
		client = transport.New(policy, topts...)
	}
	cfg.HTTPClient = &http.Client{Transport: client.Transport()}
	return cfg, nil
}

// newS3Client is the one place the real S3 client is built: on the AWS
// configuration the SDK's own lookups (region, credentials) load with
// their own client, its requests sent on tc when given.
func newS3Client(ctx context.Context, tc *transport.Client) (*s3.Client, error) {
	cfg, err := awsConfig(ctx, nil)
	if err != nil {
		return nil, err
	}
	if tc != nil {
		cfg.HTTPClient = &http.Client{Transport: tc.Transport()}
	}
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
