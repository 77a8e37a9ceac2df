package fleet

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"

	"github.com/lockstep-dev/lockstep/internal/testkit/awsfake"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/verdict"
)

// sdkClients points the real SDK clients at an AWS protocol fake.
func sdkClients(t *testing.T, f *awsfake.AWS) DiscoverOptions {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	creds := credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "SECRET", "")
	return DiscoverOptions{
		AutoScaling: autoscaling.New(autoscaling.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}),
		EC2:         ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}),
		ELBv2:       elbv2.New(elbv2.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}),
	}
}

func fakeAWS() *awsfake.AWS {
	return &awsfake.AWS{
		PageSize: 2,
		Instances: []awsfake.Instance{
			{ID: "i-01", PrivateIP: "10.0.0.1", ASG: "web", Tags: map[string]string{"role": "web"}},
			{ID: "i-02", PrivateIP: "10.0.0.2", ASG: "web", LifecycleState: "Pending:Wait", Tags: map[string]string{"role": "web"}},
			{ID: "i-03", PrivateIP: "10.0.0.3", ASG: "web", LifecycleState: "Terminating:Wait", Tags: map[string]string{"role": "web"}},
			{ID: "i-04", PrivateIP: "10.0.0.4", ASG: "web"},
			{ID: "i-05", PrivateIP: "10.0.0.5", ASG: "web", Tags: map[string]string{"role": "web"}, State: "stopped"},
			{ID: "i-06", ASG: "web"}, // no address yet
			{ID: "i-07", PrivateIP: "10.0.1.7", ASG: "api", Tags: map[string]string{"role": "api"}},
		},
		TargetGroups: map[string][]awsfake.Target{
			"arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web/1": {
				{ID: "i-01", Port: 8080}, {ID: "i-07", Port: 8080, State: "draining"}, {ID: "10.0.2.9", Port: 8080},
			},
		},
	}
}

func urls(ts []Target) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.InstanceID+" "+t.URL)
	}
	return out
}

func TestDiscoverAWS(t *testing.T) {
	tests := []struct {
		specs []string
		want  []string
	}{
		{[]string{"asg:web"}, []string{
			"i-01 http://10.0.0.1:9464/v1/status", "i-02 http://10.0.0.2:9464/v1/status", "i-04 http://10.0.0.4:9464/v1/status",
			"i-05 http://10.0.0.5:9464/v1/status", "i-06 ",
		}},
		{[]string{"ec2-tag:role=web"}, []string{
			"i-01 http://10.0.0.1:9464/v1/status", "i-02 http://10.0.0.2:9464/v1/status", "i-03 http://10.0.0.3:9464/v1/status",
		}},
		{[]string{"tg:arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web/1"}, []string{
			"i-01 http://10.0.0.1:9464/v1/status", "i-07 http://10.0.1.7:9464/v1/status", " http://10.0.2.9:9464/v1/status",
		}},
		{[]string{"asg:api", "ec2-tag:role=api", "http://10.0.1.7:9464/v1/status"}, []string{"i-07 http://10.0.1.7:9464/v1/status"}},
	}
	for _, tt := range tests {
		o := sdkClients(t, fakeAWS())
		got, err := Discover(context.Background(), tt.specs, o)
		if err != nil {
			t.Errorf("Discover(%q) = %v", tt.specs, err)
			continue
		}
		if !reflect.DeepEqual(urls(got), tt.want) {
			t.Errorf("Discover(%q) =\n%q\nwant\n%q", tt.specs, urls(got), tt.want)
		}
	}
}

func TestDiscoverPaginates(t *testing.T) {
	f := fakeAWS()
	o := sdkClients(t, f)
	got, err := Discover(context.Background(), []string{"ec2-tag:role=web"}, o)
	if err != nil || len(got) != 3 {
		t.Fatalf("Discover = %d targets, %v", len(got), err)
	}
	if n := len(f.Calls("DescribeInstances")); n != 2 {
		t.Errorf("DescribeInstances called %d times for 3 instances in pages of 2, want 2", n)
	}
}

func TestDiscoverErrors(t *testing.T) {
	o := sdkClients(t, fakeAWS())
	for _, spec := range []string{"asg:nope", "tg:arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/nope/1", "ec2-tag:role", "rds:db", "nonsense", "file:/does/not/exist", "http://"} {
		_, err := Discover(context.Background(), []string{spec}, o)
		var se *SpecError
		if !errors.As(err, &se) {
			t.Errorf("Discover(%q) = %v, want a *SpecError", spec, err)
		}
	}
	down := "http://" + testenv.RefusedAddr(t)
	creds := credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "SECRET", "")
	o = DiscoverOptions{AutoScaling: autoscaling.New(autoscaling.Options{Region: "us-east-1", BaseEndpoint: aws.String(down), Credentials: creds, RetryMaxAttempts: 1})}
	if _, err := Discover(context.Background(), []string{"asg:web"}, o); !verdict.IsUnavailable(err) {
		t.Errorf("Discover(asg:web) with Auto Scaling down = %v, want an *UnavailableError", err)
	}
}

func TestDiscoverFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "fleet.txt")
	os.WriteFile(p, []byte(`# the web fleet
http://127.0.0.1:9001/v1/status
127.0.0.1:9002

  ::1
[::1]:9003
https://127.0.0.1:9004
http://127.0.0.1:9001/v1/status
`), 0o644)
	got, err := Discover(context.Background(), []string{"file:" + p}, DiscoverOptions{AgentPort: 9999})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		" http://127.0.0.1:9001/v1/status", " http://127.0.0.1:9002/v1/status", " http://[::1]:9999/v1/status",
		" http://[::1]:9003/v1/status", " https://127.0.0.1:9004/v1/status",
	}
	if !reflect.DeepEqual(urls(got), want) {
		t.Errorf("Discover(file) =\n%q\nwant\n%q", urls(got), want)
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("127.0.0.1:9001\nnot a host\n"), 0o644)
	var se *SpecError
	if _, err := Discover(context.Background(), []string{"file:" + bad}, DiscoverOptions{}); !errors.As(err, &se) || se.Reason == "" {
		t.Errorf("Discover(bad file) = %v, want a *SpecError naming the line", err)
	}
}
