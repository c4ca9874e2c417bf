"""Every Prometheus metric of the runtime, defined once on the default registry.

Names and labels of the ``output_guardrails_*`` and ``guardrails_*`` families are seed
003's contract; KAITO's RAG-service and guardrails response metrics keep KAITO's names (marked
below); the rest are ours. Label values are always drawn from closed sets (scanner
types from the registry, never raw user input) so cardinality stays bounded.
"""

from prometheus_client import Counter, Gauge, Histogram, Info

# Seed 003.
POLICY_LOAD = Counter(
    "output_guardrails_policy_load",
    "Policy load attempts by outcome: success, missing, invalid, load_failed.",
    ["policy_status"],
)
SCANNER_BUILD = Counter(
    "output_guardrails_scanner_build",
    "Scanner build attempts by scanner type and outcome.",
    ["type", "status"],
)
ACTIONS = Counter(
    "output_guardrails_actions",
    "Output actions applied to assistant messages: redact or block.",
    ["action"],
)
POLICY_RELOAD = Counter(
    "guardrails_policy_reload",
    "Hot reload results: success, failure, noop.",
    ["result"],
)
POLICY_LOADED_TIMESTAMP = Gauge(
    "guardrails_policy_loaded_timestamp_seconds",
    "Unix timestamp of the most recent active policy update.",
)
ACTIVE_POLICY = Info(
    "guardrails_active_policy",
    "Metadata for the active policy (path, sha256, enabled, scanner_count).",
)

# Ours.
POLICY_READY = Gauge(
    "guardrails_policy_ready",
    "1 when guardrails are disabled or an active policy is loaded; 0 when guardrails are "
    "enabled but no policy could be loaded (requests are refused).",
)
SCANNER_TRIGGERED = Counter(
    "output_guardrails_scanner_triggered",
    "Scanner hits by scanner type and the action applied for that hit.",
    ["type", "action"],
)
SCANNER_ERRORS = Counter(
    "output_guardrails_scanner_errors",
    "Scanner exceptions during scanning by type and fail mode (open or closed).",
    ["type", "fail_mode"],
)
SCAN_DURATION = Histogram(
    "output_guardrails_scan_duration_seconds",
    "Time to run the whole active scanner chain over one assistant message.",
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
)
CHAT_REQUESTS = Counter(
    "rag_chat_requests",
    "Chat completion requests by outcome: success, failure (guardrail failures included), "
    "cancelled (the client left a streamed answer before its end).",
    ["status"],
)
CHAT_DURATION = Histogram(
    "rag_chat_request_duration_seconds",
    "End-to-end latency of /v1/chat/completions.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)
CHAT_TIME_TO_FIRST_TOKEN = Histogram(
    "rag_chat_time_to_first_token_seconds",
    "Streamed chat completions: time from the request to the first answer text sent, the "
    "pipeline, the generator's first tokens and the guardrails' hold-back window included.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)
UPSTREAM_ERRORS = Counter(
    "rag_llm_upstream_errors",
    "Failed calls to the upstream LLM by reason: unreachable, timeout, http_status, bad_response.",
    ["reason"],
)

# Admission control (ours; answer.admission, README "Under load"). A turn is a request that
# runs the pipeline: chat, completions, /answer, /retrieve, /debug/retrieval.
TURNS_IN_FLIGHT = Gauge(
    "rag_turns_in_flight",
    "Turns running now (a streamed answer counts until its stream ends): what an autoscaler "
    "should scale on.",
)
TURNS_QUEUED = Gauge("rag_turns_queued", "Turns waiting for a free slot (MAX_QUEUE_SECONDS).")
TURNS_MAX_IN_FLIGHT = Gauge(
    "rag_turns_max_in_flight", "Turns that may run at once (MAX_INFLIGHT_TURNS)."
)
TURN_QUEUE_WAIT = Histogram(
    "rag_turn_queue_wait_seconds",
    "Time each admitted turn waited for a slot (0 when one was free); its count is the "
    "turns admitted.",
    buckets=(0.0, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)
TURNS_SHED = Counter(
    "rag_turns_shed",
    "Turns refused by admission control, by admitted route and reason: queue_full (429 at "
    "once) or queue_timeout (503 after MAX_QUEUE_SECONDS).",
    ["route", "reason"],
)

# Every HTTP request (ours). ``route`` is the matched route template (``/indexes/{name}``),
# never the raw path; a path no route matches is ``other``. ``method`` is one of the
# standard methods or ``other``; ``status`` is the response code; ``key`` is the name of the
# key the request used (names come from the keys file, so they are bounded), ``anonymous``
# when no key is needed, ``unauthenticated`` when none valid was given.
HTTP_REQUESTS = Counter(
    "rag_http_requests",
    "HTTP requests by route template, method, status code and key name (/metrics and probes "
    "included).",
    ["route", "method", "status", "key"],
)
HTTP_DURATION = Histogram(
    "rag_http_request_duration_seconds",
    "Latency of HTTP requests by route template and method, until the response is sent.",
    ["route", "method"],
    buckets=(
        0.001,
        0.0025,
        0.005,
        0.01,
        0.025,
        0.05,
        0.1,
        0.25,
        0.5,
        1.0,
        2.5,
        5.0,
        10.0,
        30.0,
        60.0,
    ),
)

# The RAG pipeline (ours).
GATE_DECISIONS = Counter(
    "rag_gate_decisions",
    "Retrieval gate actions: retrieve, restrict, no_retrieve.",
    ["action"],
)
PIPELINE_DECISIONS = Counter(
    "rag_pipeline_decisions",
    "Final pipeline outcomes: answer, summary, refuse, block.",
    ["decision"],
)
EVIDENCE_DROPPED = Counter(
    "rag_evidence_dropped",
    "Retrieved chunks dropped by the evidence filter, by reason (a chunk may count for several).",
    ["reason"],
)
CITATION_VALIDATIONS = Counter(
    "rag_citation_validations",
    "Citation validation results: valid, invalid (the answer is blocked), not_checked.",
    ["result"],
)
INTROSPECTION_FALLBACKS = Counter(
    "rag_introspection_fallbacks",
    "LLM introspection traces that were unusable, so the built-in backend decided.",
    ["reason"],
)
STAGE_DURATION = Histogram(
    "rag_pipeline_stage_duration_seconds",
    "Latency of each pipeline stage: introspect, gate, retrieve, filter, generate, cite.",
    ["stage"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5, 10.0),
)

# Guard models (ours). ``model`` is the configured model name (or the family), never input.
GUARD_REQUESTS = Counter(
    "sentinel_guard_requests",
    "Guard-model judgements by model, subject (prompt, answer), verdict (safe, unsafe, none) "
    "and outcome (ok, timeout, error, malformed, circuit_open, skipped).",
    ["model", "subject", "verdict", "outcome"],
)
GUARD_DURATION = Histogram(
    "sentinel_guard_request_duration_seconds",
    "Latency of guard-model calls, failed ones included.",
    ["model", "subject"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
GUARD_CIRCUIT_OPEN = Gauge(
    "sentinel_guard_circuit_open",
    "1 while the guard endpoint's circuit breaker is open (calls are not made), else 0.",
    ["model"],
)

# Governed tool calls (ours).
GOVERNANCE_RULEBASE_LOADS = Counter(
    "governance_rulebase_loads",
    "Rulebase loads with each policy version: success, invalid (the previous rulebase stays "
    "active), none (the policy has no tools section).",
    ["result"],
)
GOVERNANCE_RULEBASE_REJECTED = Gauge(
    "governance_rulebase_rejected",
    "1 while the active policy's tools section is rejected and the previous rulebase (or none) "
    "serves.",
)
GOVERNANCE_TOOL_CALLS = Counter(
    "governance_tool_calls",
    "Tool calls judged by their guards, by path (chat: proposed by the upstream LLM; invoke: "
    "POST /v1/governance/invoke) and verdict (allowed, blocked).",
    ["path", "verdict"],
)

# Scoped keys (ours): RUNTIME_KEYS_FILE and per-key rate limits. ``key`` is a key's name.
KEYS_LOADS = Counter(
    "rag_keys_loads",
    "Loads of the keys file by result: success, failure (the previous keys stay in force), "
    "noop (unchanged).",
    ["result"],
)
KEYS_ACTIVE = Gauge("rag_keys_active", "Scoped keys in force (from RUNTIME_KEYS_FILE).")
KEYS_REJECTED = Gauge(
    "rag_keys_rejected",
    "1 while the keys file on disk is rejected and the previous keys serve; else 0.",
)
KEY_RATE_LIMITED = Counter(
    "rag_key_rate_limited",
    "Requests refused with 429 because their key was over a limit, by key and limit (rpm, tpm).",
    ["key", "limit"],
)
KEY_TOKENS = Counter(
    "rag_key_tokens",
    "Tokens charged to each key (the answers' usage.total_tokens), limited by its tpm or not.",
    ["key"],
)

# The embedded index store (ours).
INDEX_FILES_QUARANTINED = Counter(
    "rag_index_files_quarantined",
    "Index files moved aside into <VECTOR_DB_PERSIST_DIR>/quarantine/ at start because they "
    "could not be loaded, by problem: damaged, symlink (refused, never followed), "
    "incompatible (another format version or embedder).",
    ["problem"],
)

# KAITO's RAG-service metrics (kaito-project/kaito, presets/ragengine/metrics/
# prometheus_metrics.py): the same names, labels and types, so a KAITO user's panels keep
# working. ``status`` is ``success`` or ``failure`` (any error answer, a rejected body included).
# Default buckets, as KAITO's. Sentinel's ``rag_chat_requests_total{status}`` above is already
# KAITO's chat counter; only its latency histogram is new.
CHAT_LATENCY = Histogram(
    "rag_chat_latency_seconds",
    "KAITO: time to call '/v1/chat/completions' in seconds, by status.",
    ["status"],
)
INDEX_REQUESTS = Counter(
    "rag_index_requests", "KAITO: successful/failed calls of POST '/index'.", ["status"]
)
INDEX_LATENCY = Histogram(
    "rag_index_latency_seconds", "KAITO: time to call POST '/index' in seconds.", ["status"]
)
INDEXES_REQUESTS = Counter(
    "rag_indexes_requests", "KAITO: successful/failed calls of GET '/indexes'.", ["status"]
)
INDEXES_LATENCY = Histogram(
    "rag_indexes_latency_seconds", "KAITO: time to call GET '/indexes' in seconds.", ["status"]
)
INDEXES_DOCUMENT_REQUESTS = Counter(
    "rag_indexes_document_requests",
    "KAITO: successful/failed calls of GET '/indexes/{index_name}/documents'.",
    ["status"],
)
INDEXES_DOCUMENT_LATENCY = Histogram(
    "rag_indexes_document_latency_seconds",
    "KAITO: time to call GET '/indexes/{index_name}/documents' in seconds.",
    ["status"],
)
INDEXES_UPDATE_DOCUMENT_REQUESTS = Counter(
    "rag_indexes_update_document_requests",
    "KAITO: successful/failed calls of POST '/indexes/{index_name}/documents'.",
    ["status"],
)
INDEXES_UPDATE_DOCUMENT_LATENCY = Histogram(
    "rag_indexes_update_document_latency_seconds",
    "KAITO: time to call POST '/indexes/{index_name}/documents' in seconds.",
    ["status"],
)
INDEXES_DELETE_DOCUMENT_REQUESTS = Counter(
    "rag_indexes_delete_document_requests",
    "KAITO: successful/failed calls of POST '/indexes/{index_name}/documents/delete'.",
    ["status"],
)
INDEXES_DELETE_DOCUMENT_LATENCY = Histogram(
    "rag_indexes_delete_document_latency_seconds",
    "KAITO: time to call POST '/indexes/{index_name}/documents/delete' in seconds.",
    ["status"],
)
INDEXES_RETRIEVE_REQUESTS = Counter(
    "rag_indexes_retrieve_requests",
    "KAITO: successful/failed calls of POST '/retrieve'.",
    ["status"],
)
INDEXES_RETRIEVE_LATENCY = Histogram(
    "rag_indexes_retrieve_latency_seconds",
    "KAITO: time to call POST '/retrieve' in seconds.",
    ["status"],
)
PERSIST_REQUESTS = Counter(
    "rag_persist_requests",
    "KAITO: successful/failed calls of POST '/persist/{index_name}'.",
    ["status"],
)
PERSIST_LATENCY = Histogram(
    "rag_persist_latency_seconds",
    "KAITO: time to call POST '/persist/{index_name}' in seconds.",
    ["status"],
)
LOAD_REQUESTS = Counter(
    "rag_load_requests", "KAITO: successful/failed calls of POST '/load/{index_name}'.", ["status"]
)
LOAD_LATENCY = Histogram(
    "rag_load_latency_seconds",
    "KAITO: time to call POST '/load/{index_name}' in seconds.",
    ["status"],
)
DELETE_INDEX_REQUESTS = Counter(
    "rag_delete_index_requests",
    "KAITO: successful/failed calls of DELETE '/indexes/{index_name}'.",
    ["status"],
)
DELETE_INDEX_LATENCY = Histogram(
    "rag_delete_index_latency_seconds",
    "KAITO: time to call DELETE '/indexes/{index_name}' in seconds.",
    ["status"],
)
# KAITO's guardrails response metrics: one final action per scanned assistant message
# (``allow``, ``redact``, ``block``, ``fail_closed``), and every scanner hit with the action
# it took. Counted in ``guardrails.chat.report_action``, streamed answers included.
GUARDRAILS_RESPONSE_ACTIONS = Counter(
    "ragengine_guardrails_response_actions",
    "KAITO: the final guardrails action applied to each scanned assistant message: allow, "
    "redact, block, fail_closed.",
    ["final_action"],
)
GUARDRAILS_RESPONSE_SCANNER_HITS = Counter(
    "ragengine_guardrails_response_scanner_hits",
    "KAITO: scanner hits on assistant messages by scanner type and the action applied.",
    ["scanner_type", "action"],
)

# Known label values start at zero so rate() and alerts see the series before the first event.
# A process that never loads a policy enforces none and refuses nothing: 1. Every process
# running `sentinel` defines these metrics, the operator included; a 0 there would page
# SentinelGuardrailsPolicyMissing. The runtime sets the real value when it starts.
POLICY_READY.set(1)
for _status in ("success", "missing", "invalid", "load_failed"):
    POLICY_LOAD.labels(_status)
for _action in ("redact", "block"):
    ACTIONS.labels(_action)
for _result in ("success", "failure", "noop"):
    POLICY_RELOAD.labels(_result)
for _status in ("success", "failure", "cancelled"):
    CHAT_REQUESTS.labels(_status)
for _action in ("retrieve", "restrict", "no_retrieve"):
    GATE_DECISIONS.labels(_action)
for _decision in ("answer", "summary", "refuse", "block"):
    PIPELINE_DECISIONS.labels(_decision)
for _result in ("valid", "invalid", "not_checked"):
    CITATION_VALIDATIONS.labels(_result)
for _reason in ("unreachable", "timeout", "http_status", "bad_response"):
    UPSTREAM_ERRORS.labels(_reason)
for _result in ("success", "invalid", "none"):
    GOVERNANCE_RULEBASE_LOADS.labels(_result)
for _path in ("chat", "invoke"):
    for _verdict in ("allowed", "blocked"):
        GOVERNANCE_TOOL_CALLS.labels(_path, _verdict)
for _status in ("success", "failure"):  # KAITO's families, charted in the KAITO row
    CHAT_LATENCY.labels(_status)
    INDEX_REQUESTS.labels(_status)
    INDEX_LATENCY.labels(_status)
    INDEXES_REQUESTS.labels(_status)
    INDEXES_LATENCY.labels(_status)
    INDEXES_DOCUMENT_REQUESTS.labels(_status)
    INDEXES_DOCUMENT_LATENCY.labels(_status)
    INDEXES_UPDATE_DOCUMENT_REQUESTS.labels(_status)
    INDEXES_UPDATE_DOCUMENT_LATENCY.labels(_status)
    INDEXES_DELETE_DOCUMENT_REQUESTS.labels(_status)
    INDEXES_DELETE_DOCUMENT_LATENCY.labels(_status)
    INDEXES_RETRIEVE_REQUESTS.labels(_status)
    INDEXES_RETRIEVE_LATENCY.labels(_status)
    PERSIST_REQUESTS.labels(_status)
    PERSIST_LATENCY.labels(_status)
    LOAD_REQUESTS.labels(_status)
    LOAD_LATENCY.labels(_status)
    DELETE_INDEX_REQUESTS.labels(_status)
    DELETE_INDEX_LATENCY.labels(_status)
for _result in ("success", "failure", "noop"):
    KEYS_LOADS.labels(_result)
for _problem in ("damaged", "symlink", "incompatible"):  # index/persistence.py PROBLEMS
    INDEX_FILES_QUARANTINED.labels(_problem)
for _final in ("allow", "redact", "block", "fail_closed"):
    GUARDRAILS_RESPONSE_ACTIONS.labels(_final)
