package awsfake

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// members returns the values of a query list (prefix.1, prefix.2, ...).
func members(r *http.Request, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := r.Form[prefix+"."+strconv.Itoa(i)]
		if !ok {
			return out
		}
		out = append(out, v...)
	}
}

// page returns the slice [start, end) of n items for the request's
// NextToken, and the next token ("" on the last page).
func (f *AWS) page(r *http.Request, tokenParam string, n int) (int, int, string) {
	start, _ := strconv.Atoi(r.Form.Get(tokenParam))
	end := n
	if f.PageSize > 0 && start+f.PageSize < n {
		end = start + f.PageSize
	}
	start = min(start, n)
	if end < n {
		return start, end, strconv.Itoa(end)
	}
	return start, end, ""
}

func (f *AWS) describeGroups(w http.ResponseWriter, r *http.Request) {
	names := members(r, "AutoScalingGroupNames.member")
	groups := map[string][]Instance{}
	for _, in := range f.Instances {
		if in.ASG != "" {
			groups[in.ASG] = append(groups[in.ASG], in)
		}
	}
	var keys []string
	for k := range groups {
		if len(names) == 0 || contains(names, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	start, end, next := f.page(r, "NextToken", len(keys))
	var b strings.Builder
	b.WriteString(`<DescribeAutoScalingGroupsResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/"><DescribeAutoScalingGroupsResult><AutoScalingGroups>`)
	for _, k := range keys[start:end] {
		fmt.Fprintf(&b, `<member><AutoScalingGroupName>%s</AutoScalingGroupName><AutoScalingGroupARN>arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:uuid:autoScalingGroupName/%s</AutoScalingGroupARN><MinSize>0</MinSize><MaxSize>100</MaxSize><DesiredCapacity>%d</DesiredCapacity><Instances>`, esc(k), esc(k), len(groups[k]))
		for _, in := range groups[k] {
			fmt.Fprintf(&b, `<member><InstanceId>%s</InstanceId><AvailabilityZone>%s</AvailabilityZone><LifecycleState>%s</LifecycleState><HealthStatus>Healthy</HealthStatus><ProtectedFromScaleIn>false</ProtectedFromScaleIn></member>`,
				esc(in.ID), esc(in.AZ), esc(or(in.LifecycleState, "InService")))
		}
		b.WriteString(`</Instances></member>`)
	}
	b.WriteString(`</AutoScalingGroups>`)
	if next != "" {
		fmt.Fprintf(&b, `<NextToken>%s</NextToken>`, next)
	}
	b.WriteString(`</DescribeAutoScalingGroupsResult><ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata></DescribeAutoScalingGroupsResponse>`)
	writeXML(w, b.String())
}

func (f *AWS) describeASGInstances(w http.ResponseWriter, r *http.Request) {
	ids := members(r, "InstanceIds.member")
	var b strings.Builder
	b.WriteString(`<DescribeAutoScalingInstancesResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/"><DescribeAutoScalingInstancesResult><AutoScalingInstances>`)
	for _, in := range f.Instances {
		if in.ASG == "" || (len(ids) > 0 && !contains(ids, in.ID)) {
			continue
		}
		fmt.Fprintf(&b, `<member><InstanceId>%s</InstanceId><AutoScalingGroupName>%s</AutoScalingGroupName><AvailabilityZone>%s</AvailabilityZone><LifecycleState>%s</LifecycleState><HealthStatus>HEALTHY</HealthStatus><ProtectedFromScaleIn>false</ProtectedFromScaleIn></member>`,
			esc(in.ID), esc(in.ASG), esc(in.AZ), esc(or(in.LifecycleState, "InService")))
	}
	b.WriteString(`</AutoScalingInstances></DescribeAutoScalingInstancesResult><ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata></DescribeAutoScalingInstancesResponse>`)
	writeXML(w, b.String())
}

func (f *AWS) describeInstances(w http.ResponseWriter, r *http.Request) {
	ids := members(r, "InstanceId")
	type filter struct {
		name   string
		values []string
	}
	var filters []filter
	for i := 1; ; i++ {
		p := "Filter." + strconv.Itoa(i)
		name := r.Form.Get(p + ".Name")
		if name == "" {
			break
		}
		filters = append(filters, filter{name, members(r, p+".Value")})
	}
	var match []Instance
	for _, in := range f.Instances {
		if len(ids) > 0 && !contains(ids, in.ID) {
			continue
		}
		ok := true
		for _, fl := range filters {
			switch {
			case fl.name == "instance-state-name":
				ok = ok && contains(fl.values, or(in.State, "running"))
			case fl.name == "instance-id":
				ok = ok && contains(fl.values, in.ID)
			case strings.HasPrefix(fl.name, "tag:"):
				v, has := in.Tags[strings.TrimPrefix(fl.name, "tag:")]
				ok = ok && has && contains(fl.values, v)
			default:
				writeError(w, ec2NS, http.StatusBadRequest, "InvalidParameterValue", "unknown filter "+fl.name)
				return
			}
		}
		if ok {
			match = append(match, in)
		}
	}
	start, end, next := f.page(r, "NextToken", len(match))
	var b strings.Builder
	b.WriteString(`<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>fake</requestId><reservationSet>`)
	for _, in := range match[start:end] {
		fmt.Fprintf(&b, `<item><reservationId>r-%s</reservationId><ownerId>123456789012</ownerId><instancesSet><item><instanceId>%s</instanceId><instanceState><code>16</code><name>%s</name></instanceState>`,
			esc(in.ID), esc(in.ID), esc(or(in.State, "running")))
		if in.PrivateIP != "" { // EC2 omits the element for an instance without one
			fmt.Fprintf(&b, `<privateIpAddress>%s</privateIpAddress>`, esc(in.PrivateIP))
		}
		fmt.Fprintf(&b, `<placement><availabilityZone>%s</availabilityZone></placement><tagSet>`, esc(in.AZ))
		for k, v := range in.Tags {
			fmt.Fprintf(&b, `<item><key>%s</key><value>%s</value></item>`, esc(k), esc(v))
		}
		b.WriteString(`</tagSet></item></instancesSet></item>`)
	}
	b.WriteString(`</reservationSet>`)
	if next != "" {
		fmt.Fprintf(&b, `<nextToken>%s</nextToken>`, next)
	}
	b.WriteString(`</DescribeInstancesResponse>`)
	writeXML(w, b.String())
}

func (f *AWS) describeTargetHealth(w http.ResponseWriter, r *http.Request) {
	arn := r.Form.Get("TargetGroupArn")
	targets, ok := f.TargetGroups[arn]
	if !ok {
		writeError(w, elbNS, http.StatusBadRequest, "TargetGroupNotFound", "One or more target groups not found")
		return
	}
	var b strings.Builder
	b.WriteString(`<DescribeTargetHealthResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"><DescribeTargetHealthResult><TargetHealthDescriptions>`)
	for _, t := range targets {
		fmt.Fprintf(&b, `<member><Target><Id>%s</Id><Port>%d</Port></Target><HealthCheckPort>%d</HealthCheckPort><TargetHealth><State>%s</State></TargetHealth></member>`,
			esc(t.ID), t.Port, t.Port, esc(or(t.State, "healthy")))
	}
	b.WriteString(`</TargetHealthDescriptions></DescribeTargetHealthResult><ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata></DescribeTargetHealthResponse>`)
	writeXML(w, b.String())
}

func writeXML(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Write([]byte(body))
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }
