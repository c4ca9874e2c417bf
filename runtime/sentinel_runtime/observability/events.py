"""Every structured log event name the runtime emits, defined once.

The ``OUTPUT_GUARDRAILS_*`` names are those of the output-guardrails contract
(docs/contracts.md) word for word; dashboards,
alerts and audit tooling match on them, so they never change spelling.
"""

from typing import Final

# Policy loading (output-guardrails contract, docs/contracts.md).
POLICY_MISSING: Final = "output_guardrails_policy_missing"
POLICY_LOAD_FAILED: Final = "output_guardrails_policy_load_failed"
POLICY_INVALID: Final = "output_guardrails_policy_invalid"
POLICY_INVALID_SCANNERS: Final = "output_guardrails_policy_invalid_scanners"
POLICY_UNKNOWN_SCANNER: Final = "output_guardrails_policy_unknown_scanner"
POLICY_INVALID_SCANNER_CONFIG: Final = "output_guardrails_policy_invalid_scanner_config"
POLICY_INCOMPATIBLE_SCANNER_ACTION: Final = "output_guardrails_policy_incompatible_scanner_action"
POLICY_INVALID_ACTION: Final = "output_guardrails_policy_invalid_action"

# Scanning, building and reloading (output-guardrails contract).
TRIGGERED: Final = "output_guardrails_triggered"
FAILED: Final = "output_guardrails_failed"
SCANNER_BUILD_FAILED: Final = "output_guardrails_policy_scanner_build_failed"
HOT_RELOAD_DISABLED: Final = "output_guardrails_hot_reload_disabled"
RELOADER_TERMINATED: Final = "output_guardrails_reloader_terminated"
RELOAD_FAILED: Final = "output_guardrails_reload_failed"
RELOAD_NOOP: Final = "output_guardrails_reload_noop"
RELOAD_SUCCEEDED: Final = "output_guardrails_reload_succeeded"

# Ours, beyond the seed.
POLICY_LOADED: Final = "output_guardrails_policy_loaded"
POLICY_UNKNOWN_FIELD: Final = "output_guardrails_policy_unknown_field"
HOT_RELOAD_STARTED: Final = "output_guardrails_hot_reload_started"
RUNTIME_STARTED: Final = "runtime_started"
# The hard open-file limit is below what admission can hold open (open_files.py).
OPEN_FILES_LOW: Final = "runtime_open_files_low"
RUNTIME_STOPPED: Final = "runtime_stopped"
CHAT_COMPLETED: Final = "chat_completion_completed"
UPSTREAM_FAILED: Final = "llm_upstream_failed"
REQUEST_REJECTED: Final = "request_rejected"
POLICY_INVALID_FAIL_MODE: Final = "output_guardrails_policy_invalid_fail_mode"
POLICY_INVALID_BLOCK_MESSAGE: Final = "output_guardrails_policy_invalid_block_message"

# The RAG pipeline (ours).
POLICY_INVALID_SECTION: Final = "output_guardrails_policy_invalid_section"
PIPELINE_DECISION: Final = "rag_pipeline_decision"
INTROSPECTION_FALLBACK: Final = "rag_introspection_fallback"
CITATIONS_BLOCKED: Final = "rag_citations_blocked"
AUDIT_WRITE_FAILED: Final = "rag_audit_write_failed"
DEMO_CORPUS_LOADED: Final = "rag_demo_corpus_loaded"
INDEX_FILE_QUARANTINED: Final = "rag_index_file_quarantined"

# Guard models (ours).
GUARD_FAILED: Final = "guard_request_failed"
GUARD_CIRCUIT_OPENED: Final = "guard_circuit_opened"
GUARD_CIRCUIT_CLOSED: Final = "guard_circuit_closed"
GUARD_ANSWER_BLOCKED: Final = "guard_answer_blocked"

# Governed tool calls (ours).
GOVERNANCE_RULEBASE_LOADED: Final = "governance_rulebase_loaded"
GOVERNANCE_RULEBASE_INVALID: Final = "governance_rulebase_invalid"
GOVERNANCE_TOOL_CALL_BLOCKED: Final = "governance_tool_call_blocked"

# Scoped keys (ours): the keys file (RUNTIME_KEYS_FILE) and per-key rate limits.
KEYS_LOADED: Final = "runtime_keys_loaded"
KEYS_INVALID: Final = "runtime_keys_invalid"
KEYS_RELOADED: Final = "runtime_keys_reload_succeeded"
KEYS_RELOAD_FAILED: Final = "runtime_keys_reload_failed"
KEYS_HOT_RELOAD_STARTED: Final = "runtime_keys_hot_reload_started"
KEYS_RELOADER_TERMINATED: Final = "runtime_keys_reloader_terminated"
REQUEST_RATE_LIMITED: Final = "request_rate_limited"

# Traces (observability/tracing.py, docs/tracing.md).
TRACING_STARTED: Final = "tracing_started"
TRACING_EXPORTER_UNKNOWN: Final = "tracing_exporter_unknown"
