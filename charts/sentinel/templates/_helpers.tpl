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
{{- range .Values.watchNamespaces }}
{{- if regexMatch "[*?\\[\\]!]" . }}
{{- fail (printf "peering (peering.enabled or replicaCount > 1) needs exact namespace names in watchNamespaces: %q is a pattern, and kopf keeps one KopfPeering object per namespace" .) }}
{{- end }}
{{- end }}
{{- end }}
