// Package deps pins the module's dependencies until code imports them. Temporary.
package deps

import (
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	_ "github.com/aws/aws-sdk-go-v2/service/autoscaling"
	_ "github.com/aws/aws-sdk-go-v2/service/ec2"
	_ "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	_ "github.com/aws/aws-sdk-go-v2/service/s3"
	_ "github.com/google/go-containerregistry/pkg/crane"
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "github.com/google/go-containerregistry/pkg/v1/random"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "github.com/hashicorp/go-retryablehttp"
	_ "github.com/johannesboyne/gofakes3"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/sigstore/cosign/v2/pkg/cosign"
	_ "github.com/sigstore/sigstore/pkg/signature"
	_ "github.com/urfave/cli/v2"
	_ "golang.org/x/net/html"
	_ "golang.org/x/text/unicode/norm"
	_ "golang.org/x/time/rate"
	_ "gopkg.in/yaml.v3"
	_ "k8s.io/api/admission/v1"
	_ "k8s.io/api/core/v1"
)
