package awsfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// ECSTask is one task of an ECS service.
type ECSTask struct {
	ARN string
	// LastStatus is the task's status; default "RUNNING".
	LastStatus string
	// CPUArchitecture is the ecs.cpu-architecture attribute (x86_64,
	// arm64), if any.
	CPUArchitecture string
	// PlatformFamily is the task's platformFamily (Fargate's
	// runtimePlatform: "Linux", "WINDOWS_SERVER_2022_CORE"), if any.
	PlatformFamily string
	Containers     []ECSContainer
}

// ECSContainer is one container of a task.
type ECSContainer struct {
	Name, Image string
	// ImageDigest is what ECS reports; "" before the image is pulled.
	ImageDigest string
}

// ecsTarget is the JSON protocol's X-Amz-Target prefix of ECS.
const ecsTarget = "AmazonEC2ContainerServiceV20141113."

// serveECS answers ECS's JSON 1.1 protocol: ListTasks (paged by PageSize,
// default 100, with nextToken) and DescribeTasks (at most 100 tasks).
func (f *AWS) serveECS(w http.ResponseWriter, r *http.Request, action string) {
	var in struct {
		Cluster       string   `json:"cluster"`
		ServiceName   string   `json:"serviceName"`
		DesiredStatus string   `json:"desiredStatus"`
		NextToken     string   `json:"nextToken"`
		MaxResults    int      `json:"maxResults"`
		Tasks         []string `json:"tasks"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		ecsError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, Request{Action: action, Params: map[string][]string{
		"cluster": {in.Cluster}, "serviceName": {in.ServiceName}, "nextToken": {in.NextToken}, "tasks": {strconv.Itoa(len(in.Tasks))},
	}})
	fail := f.failAction[action] > 0
	if fail {
		f.failAction[action]--
	}
	f.mu.Unlock()
	switch {
	case r.Header.Get("Authorization") == "":
		ecsError(w, http.StatusBadRequest, "MissingAuthenticationTokenException", "Missing Authentication Token")
		return
	case fail:
		ecsError(w, http.StatusServiceUnavailable, "ServiceUnavailableException", "Service is unavailable")
		return
	}
	cluster := false
	for k := range f.ECSServices {
		cluster = cluster || strings.HasPrefix(k, in.Cluster+"/")
	}
	if !cluster {
		ecsError(w, http.StatusBadRequest, "ClusterNotFoundException", "Cluster not found.")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	switch action {
	case "ListTasks":
		tasks, ok := f.ECSServices[in.Cluster+"/"+in.ServiceName]
		if !ok {
			ecsError(w, http.StatusBadRequest, "ServiceNotFoundException", "Service not found.")
			return
		}
		var arns []string
		for _, t := range tasks {
			if in.DesiredStatus == "" || in.DesiredStatus == "RUNNING" {
				arns = append(arns, t.ARN)
			}
		}
		size := f.PageSize
		if size <= 0 {
			size = 100
		}
		if in.MaxResults > 0 {
			size = min(size, in.MaxResults)
		}
		start, _ := strconv.Atoi(in.NextToken)
		start = min(start, len(arns))
		end := min(start+size, len(arns))
		out := map[string]any{"taskArns": arns[start:end]}
		if end < len(arns) {
			out["nextToken"] = strconv.Itoa(end)
		}
		_ = json.NewEncoder(w).Encode(out)
	case "DescribeTasks":
		if len(in.Tasks) == 0 || len(in.Tasks) > 100 {
			ecsError(w, http.StatusBadRequest, "InvalidParameterException", "Tasks must hold 1 to 100 tasks.")
			return
		}
		byARN := map[string]ECSTask{}
		for k, ts := range f.ECSServices {
			if strings.HasPrefix(k, in.Cluster+"/") {
				for _, t := range ts {
					byARN[t.ARN] = t
				}
			}
		}
		tasks, failures := []any{}, []any{}
		for _, arn := range in.Tasks {
			t, ok := byARN[arn]
			if !ok {
				failures = append(failures, map[string]string{"arn": arn, "reason": "MISSING"})
				continue
			}
			tasks = append(tasks, ecsTaskJSON(t))
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"tasks": tasks, "failures": failures})
	default:
		ecsError(w, http.StatusBadRequest, "InvalidAction", "The action "+action+" is not valid for this web service.")
	}
}

func ecsTaskJSON(t ECSTask) map[string]any {
	status := t.LastStatus
	if status == "" {
		status = "RUNNING"
	}
	var cs []map[string]string
	for _, c := range t.Containers {
		m := map[string]string{"name": c.Name, "image": c.Image, "lastStatus": status, "taskArn": t.ARN}
		if c.ImageDigest != "" {
			m["imageDigest"] = c.ImageDigest
		}
		cs = append(cs, m)
	}
	out := map[string]any{"taskArn": t.ARN, "lastStatus": status, "desiredStatus": "RUNNING", "containers": cs}
	if t.PlatformFamily != "" {
		out["platformFamily"] = t.PlatformFamily
	}
	if t.CPUArchitecture != "" {
		out["attributes"] = []map[string]string{{"name": "ecs.cpu-architecture", "value": t.CPUArchitecture}}
	}
	return out
}

func ecsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}
