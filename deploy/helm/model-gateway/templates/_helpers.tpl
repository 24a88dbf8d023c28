{{/* The chart's name, or nameOverride. */}}
{{- define "model-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: fullnameOverride, else release-chart (the release alone when it holds the chart's name). */}}
{{- define "model-gateway.fullname" -}}
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

{{- define "model-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "model-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "model-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "model-gateway.labels" -}}
helm.sh/chart: {{ include "model-gateway.chart" . }}
{{ include "model-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "model-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "model-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "model-gateway.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* "true" when the store is PostgreSQL (a URL or a Secret holding one), else "". */}}
{{- define "model-gateway.postgres" -}}
{{- if or .Values.database.url .Values.database.existingSecret }}true{{ end }}
{{- end }}

{{- define "model-gateway.redis" -}}
{{- if or .Values.redis.url .Values.redis.existingSecret }}true{{ end }}
{{- end }}

{{/* More than one replica may run: fixed replicas above one, or autoscaling. */}}
{{- define "model-gateway.replicated" -}}
{{- if or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled }}true{{ end }}
{{- end }}

{{/* gateway.yaml: server and store from the values, then config's providers, models and plugins. */}}
{{- define "model-gateway.gatewayYaml" -}}
{{- $redis := include "model-gateway.redis" . -}}
{{- $server := merge (dict "host" "${GATEWAY_HOST:-0.0.0.0}" "port" 8080) (omit .Values.config.server "host" "port") -}}
server:
  {{- toYaml $server | nindent 2 }}
store:
{{- if include "model-gateway.postgres" . }}
  driver: postgres
  url: ${DATABASE_URL}
  pool_size: {{ .Values.database.poolSize }}
{{- else }}
  driver: sqlite
  path: /data/gateway.db
{{- end }}
{{- if $redis }}
shared_state:
  driver: redis
  url: ${REDIS_URL}
{{- end }}
providers:
  {{- toYaml .Values.config.providers | nindent 2 }}
models:
  {{- toYaml .Values.config.models | nindent 2 }}
plugins:
{{- range .Values.config.plugins }}
{{- if and $redis (kindIs "map" .) (hasKey . "limits") }}
  - limits:
      {{- toYaml (merge (dict "store" "redis" "redis" (dict "url" "${REDIS_URL}")) (omit (index . "limits") "store")) | nindent 6 }}
{{- else }}
  - {{ toYaml . | nindent 4 | trim }}
{{- end }}
{{- end }}
{{- end }}

{{/* An environment variable from a value or from a Secret's key. */}}
{{- define "model-gateway.envFrom" -}}
{{- $v := index . 1 -}}
- name: {{ index . 0 }}
{{- if $v.existingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ $v.existingSecret }}
      key: {{ $v.key }}
{{- else }}
  value: {{ $v.url | quote }}
{{- end }}
{{- end }}
