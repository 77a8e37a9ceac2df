package agent

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/lockstep-dev/lockstep/internal/testkit/awsfake"
)

func TestIdentify(t *testing.T) {
	asg := httptest.NewServer(&awsfake.AWS{Instances: []awsfake.Instance{{ID: "i-0abc", ASG: "web-asg"}}})
	defer asg.Close()
	asClient := autoscaling.New(autoscaling.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(asg.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	})
	base := map[string]string{"instance-id": "i-0abc", "placement/availability-zone": "us-east-1a", "local-ipv4": "10.0.0.5"}
	withTag := map[string]string{"tags/instance/aws:autoscaling:groupName": "tagged-asg"}
	for k, v := range base {
		withTag[k] = v
	}
	tests := []struct {
		name   string
		values map[string]string
		as     InstanceDescriber
		imds   bool
		want   Identity
	}{
		{"no IMDS", nil, nil, false, Identity{Hostname: "h", Source: "hostname"}},
		{"IMDS without tags, Auto Scaling asked", base, asClient, true, Identity{InstanceID: "i-0abc", ASG: "web-asg", AvailabilityZone: "us-east-1a", PrivateIP: "10.0.0.5", Hostname: "h", Source: "imds"}},
		{"IMDS with the group tag", withTag, nil, true, Identity{InstanceID: "i-0abc", ASG: "tagged-asg", AvailabilityZone: "us-east-1a", PrivateIP: "10.0.0.5", Hostname: "h", Source: "imds"}},
		{"IMDS without an instance ID", map[string]string{}, asClient, true, Identity{Hostname: "h", Source: "hostname"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := IdentifyOptions{Hostname: "h", AutoScaling: tt.as}
			if tt.imds {
				srv := httptest.NewServer(&awsfake.IMDS{Values: tt.values})
				defer srv.Close()
				o.IMDS = imds.New(imds.Options{Endpoint: srv.URL})
			}
			got, errs := Identify(context.Background(), o)
			if got != tt.want {
				t.Errorf("Identify() = %+v (errors %v), want %+v", got, errs, tt.want)
			}
		})
	}
}
