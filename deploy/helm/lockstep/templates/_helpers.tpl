{{/*
The name every object is named from: fullnameOverride, or the release name.
*/}}
{{- define "lockstep.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 54 | trimSuffix "-" -}}
{{- end -}}

{{/* The webhook's Deployment, Service, ServiceAccount and ConfigMap. */}}
{{- define "lockstep.webhookName" -}}
{{- printf "%s-webhook" (include "lockstep.fullname" .) -}}
{{- end -}}

{{/* The labels that select the webhook's pods. */}}
{{- define "lockstep.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lockstep.webhookName" . }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end -}}

{{/* The labels of every object: deploy/kubernetes's and Helm's own. */}}
{{- define "lockstep.labels" -}}
app.kubernetes.io/name: {{ include "lockstep.webhookName" . }}
app.kubernetes.io/part-of: lockstep
{{ include "lockstep.commonLabels" . }}
{{- end -}}

{{/* Helm's own labels, on every object. */}}
{{- define "lockstep.commonLabels" -}}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* The Secret holding the serving certificate. */}}
{{- define "lockstep.tlsSecret" -}}
{{- if .Values.tls.certManager.enabled -}}
{{- printf "%s-tls" (include "lockstep.webhookName" .) -}}
{{- else -}}
{{- required "tls.existingSecret: without cert-manager (tls.certManager.enabled=false), name the Secret holding the serving certificate" .Values.tls.existingSecret -}}
{{- end -}}
{{- end -}}

{{/* The image, by digest when one is given. */}}
{{- define "lockstep.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/*
The namespaces never governed: the system namespaces, the release's own
(its pods never wait on themselves), cert-manager's when it issues the
certificate (it must never wait on the webhook it serves), then
webhook.excludeNamespaces.
*/}}
{{- define "lockstep.excludedNamespaces" -}}
{{- $ns := list "kube-system" "kube-public" "kube-node-lease" .Release.Namespace -}}
{{- if .Values.tls.certManager.enabled -}}
{{- $ns = append $ns .Values.tls.certManager.namespace -}}
{{- end -}}
{{- range .Values.webhook.excludeNamespaces -}}
{{- $ns = append $ns . -}}
{{- end -}}
{{- toJson (uniq $ns) -}}
{{- end -}}

{{/*
Checks what values.schema.json cannot say (it says the rest: one manifest
source, one of release and routes, exactly one signer, the TLS Secret): a
namespace of its own, and a PodDisruptionBudget that lets drains through.
*/}}
{{- define "lockstep.validate" -}}
{{- $v := .Values -}}
{{- if eq .Release.Namespace "default" -}}
{{- fail "install lockstep into a namespace of its own (helm install -n lockstep --create-namespace): the webhook never governs the namespace it runs in, and the pods of namespace default would go unjudged" -}}
{{- end -}}
{{- if and $v.podDisruptionBudget.enabled (ge (int $v.podDisruptionBudget.minAvailable) (int $v.replicas)) -}}
{{- fail "podDisruptionBudget.minAvailable must be below replicas, or node drains block" -}}
{{- end -}}
{{- end -}}
