{{/* Names, labels and derived settings shared by the templates. */}}

{{- define "sentinel.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The prefix of object names: the release name, plus the chart name unless already in it. */}}
{{- define "sentinel.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Deployment, Service, ClusterRole: "<fullname>-operator". */}}
{{- define "sentinel.operatorName" -}}
{{- printf "%s-operator" (include "sentinel.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "sentinel.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "sentinel.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sentinel.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "sentinel.labels" -}}
helm.sh/chart: {{ include "sentinel.chart" . }}
{{ include "sentinel.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: sentinel
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "sentinel.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "sentinel.operatorName" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "sentinel.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
Peering is on when asked for or when more than one replica runs: replicas without peering
would all reconcile the same engines. Yields "true" or "".
*/}}
{{- define "sentinel.peering" -}}
{{- if or .Values.peering.enabled (gt (int .Values.replicaCount) 1) }}true{{ end }}
{{- end }}

{{/*
With peering, kopf keeps one KopfPeering per watched namespace, so each must be a real
namespace name: a glob has no object to create. Fails the render with the reason.
*/}}
{{- define "sentinel.peeringNamespaces" -}}
{{- include "sentinel.exactNamespaces" (list . "peering (peering.enabled or replicaCount > 1)" "and kopf keeps one KopfPeering object per namespace") }}
{{- end }}

{{/*
Fails the render when watchNamespaces holds a glob where exact names are needed. Arguments
(a list): the root context, what needs exact names, and why (the end of the message).
*/}}
{{- define "sentinel.exactNamespaces" -}}
{{- $needs := index . 1 }}
{{- $why := index . 2 }}
{{- range (index . 0).Values.watchNamespaces }}
{{- if regexMatch "[*?\\[\\]!]" . }}
{{- fail (printf "%s needs exact namespace names in watchNamespaces: %q is a pattern, %s" $needs . $why) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Whether the server enforces CRD validation rules (x-kubernetes-validations, CEL): beta and on
by default from Kubernetes 1.25. Older servers refuse the field (server-side apply: "field not
declared in schema"), so the chart leaves the rules out there; the operator checks the same
rules on every version. Yields "true" or "".
*/}}
{{- define "sentinel.celRules" -}}
{{- if semverCompare ">=1.25.0-0" .Capabilities.KubeVersion.Version }}true{{ end }}
{{- end }}

{{/*
Remove every x-kubernetes-validations key from a parsed schema, in place (maps and lists at
any depth). Renders nothing.
*/}}
{{- define "sentinel.dropValidationRules" -}}
{{- if kindIs "map" . }}
{{- $_ := unset . "x-kubernetes-validations" }}
{{- range $key, $value := . }}
{{- $_ := include "sentinel.dropValidationRules" $value }}
{{- end }}
{{- else if kindIs "slice" . }}
{{- range . }}
{{- $_ := include "sentinel.dropValidationRules" . }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The operator's rules in the namespaces it serves (a Role in each watched namespace, or the
ClusterRole when it serves all). It reads and writes RAGEngines and their status, owns
Deployments and Services (delete: only a Service of its own that a renamed
queryServiceName/indexServiceName left behind), creates (never updates or deletes) the
namespace copy of the policy template, reads ConfigMaps to judge policies, posts Events, and
reads a Secret's metadata by name (never list or watch, never its data) to report a missing
accessSecret or key; the runtime pods read their secrets through secretKeyRef, never the
operator.
*/}}
{{- define "sentinel.namespacedRules" -}}
- apiGroups: [rag.sentinel.dev]
  resources: [ragengines]
  verbs: [get, list, watch, patch]
- apiGroups: [rag.sentinel.dev]
  resources: [ragengines/status]
  verbs: [get, update, patch]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, patch]
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create]
- apiGroups: ["", events.k8s.io]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
{{- end }}

{{/*
Per-namespace RBAC needs exact namespace names: a glob (team-*) has no namespace to hold a
Role, and granting it cluster-wide would defeat watchNamespaces. Fails the render with the
reason (only when the chart creates the RBAC).
*/}}
{{- define "sentinel.rbacNamespaces" -}}
{{- include "sentinel.exactNamespaces" (list . "rbac.create" "and the operator's rights are granted by a Role in each watched namespace. List the namespaces, leave watchNamespaces empty for a cluster-wide operator, or set rbac.create=false and bring your own RBAC") }}
{{- end }}
