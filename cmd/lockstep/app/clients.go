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
	"github.com/aws/aws-sdk-go-v2/credentials"
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
// the AWS variables of the run's own environment env (Run's env; see
// awsEnvOptions) given to the SDK explicitly, ahead of opts, and with
// every request sent on client and retried under its policy. A nil client
// is one of its own, with the default policy, that trusts the SDK's CA
// bundle. When AWS_CA_BUNDLE is set the SDK refuses a custom HTTP client at
// load time (it wants to add the bundle itself), so client is set after
// loading: a given client must already trust the bundle (awsCABundle).
func awsConfig(ctx context.Context, env map[string]string, client *transport.Client, opts ...func(*awsconfig.LoadOptions) error) (aws.Config, error) {
	scoped, err := awsEnvOptions(env)
	if err != nil {
		return aws.Config{}, err
	}
	opts = append(scoped, opts...)
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

// awsEnv are the AWS SDK's variables a run can take from its own
// environment (Run's env; scopedEnv). AWS_MAX_ATTEMPTS is not one: the SDK
// ignores it, from anywhere, when a retryer is configured, and awsConfig
// always configures the transport policy's.
var awsEnv = []string{
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
	"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
}

// awsEnvOptions are the load options that give the SDK the AWS variables
// of the run's own environment env, which it would otherwise read from the
// process's: AWS_REGION, AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY (and
// AWS_SESSION_TOKEN) as static credentials, AWS_ENDPOINT_URL as the base
// endpoint. AWS_ENDPOINT_URL_S3 is the S3 client's (newS3Client). A
// variable env does not hold, or holds empty (as the SDK reads an empty
// one), is the SDK's to find as before. A key ID without its secret (or
// the reverse) is a usage error.
func awsEnvOptions(env map[string]string) ([]func(*awsconfig.LoadOptions) error, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if r := env["AWS_REGION"]; r != "" {
		opts = append(opts, awsconfig.WithRegion(r))
	}
	id, secret := env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]
	switch {
	case id != "" && secret != "":
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(id, secret, env["AWS_SESSION_TOKEN"])))
	case id != "" || secret != "" || env["AWS_SESSION_TOKEN"] != "":
		return nil, usage(fmt.Errorf("the run's environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together (and AWS_SESSION_TOKEN with them)"))
	}
	if ep := env["AWS_ENDPOINT_URL"]; ep != "" {
		opts = append(opts, awsconfig.WithBaseEndpoint(ep))
	}
	return opts, nil
}

// newS3Client is the one place the real S3 client is built: on the AWS
// configuration (awsConfig, with the run's own environment env) the SDK's
// own lookups (region, credentials) load with their own client, its
// requests sent on tc when given. env's AWS_ENDPOINT_URL_S3, when set, is
// the S3 endpoint, as the process's is the SDK's.
func newS3Client(ctx context.Context, env map[string]string, tc *transport.Client) (*s3.Client, error) {
	cfg, err := awsConfig(ctx, env, nil)
	if err != nil {
		return nil, err
	}
	if tc != nil {
		cfg.HTTPClient = &http.Client{Transport: tc.Transport()}
	}
	endpoint := env["AWS_ENDPOINT_URL_S3"]
	custom := endpoint != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != "" || cfg.BaseEndpoint != nil
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
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = pathStyle
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}
