"""Pure status logic: conditions, policy judgement with the runtime's parser, rollout."""

from __future__ import annotations

import pytest

from sentinel_operator import conditions, crd, manifests, policy_status, rollout, storage_status

GOOD = "scanners:\n  - type: regex\n    patterns: ['x']\n  - type: nope\n"


def test_transition_time_moves_only_when_status_changes() -> None:
    first = conditions.merge(None, [conditions.condition("PolicyReady", True, "A", "", 1)], "t1")
    same = conditions.merge(first, [conditions.condition("PolicyReady", True, "B", "", 2)], "t2")
    flipped = conditions.merge(same, [conditions.condition("PolicyReady", False, "C", "", 2)], "t3")
    assert first[0]["lastTransitionTime"] == "t1"
    assert same[0]["lastTransitionTime"] == "t1" and same[0]["reason"] == "B"
    assert flipped[0]["lastTransitionTime"] == "t3"


def test_ready_names_the_first_component_that_is_not_ready() -> None:
    parts = [
        conditions.condition("PolicyReady", True, "PolicyValid", "ok", 1),
        conditions.condition("StorageReady", True, "EmbeddedStore", "in memory", 1),
        conditions.condition("DeploymentReady", False, "ReplicasNotReady", "0/1 ready", 1),
        conditions.condition("ServiceReady", True, "ServiceApplied", "", 1),
    ]
    ready = conditions.ready(parts, 1)
    assert ready["status"] == "False" and ready["reason"] == "ReplicasNotReady"
    assert "DeploymentReady" in ready["message"]
    parts[2] = conditions.condition("DeploymentReady", True, "ReplicasReady", "1/1", 1)
    assert conditions.ready(parts, 1)["status"] == "True"
    assert conditions.ready(parts[:1] + parts[2:], 1)["status"] == "Unknown"  # not judged yet


@pytest.mark.parametrize(
    ("name", "data", "found", "status", "reason"),
    [
        pytest.param(None, None, False, "True", "GuardrailsDisabled", id="disabled"),
        pytest.param("p", None, False, "False", "ConfigMapNotFound", id="missing-configmap"),
        pytest.param("p", {"other": "x"}, True, "False", "PolicyKeyMissing", id="missing-key"),
        pytest.param(
            "p", {"guardrails.yaml": "- a list"}, True, "False", "PolicyInvalid", id="list"
        ),
        pytest.param(
            "p",
            {"guardrails.yaml": "scanners: [{type: nope}, {type: regex}]"},
            True,
            "False",
            "NoActiveScanners",
            id="only-invalid-scanners",
        ),
        pytest.param("p", {"guardrails.yaml": GOOD}, True, "True", "PolicyValid", id="valid"),
    ],
)
def test_policy_judgement(name, data, found, status, reason) -> None:
    judgement = policy_status.judge(name, data, generation=3, found=found)
    assert judgement.condition["status"] == status
    assert judgement.condition["reason"] == reason


def test_policy_status_reports_hash_active_and_skipped_like_the_runtime() -> None:
    judgement = policy_status.judge("p", {"guardrails.yaml": GOOD}, generation=1, found=True)
    assert judgement.status["activeScanners"] == 1
    assert judgement.status["skipped"] == [
        {"index": 1, "type": "nope", "reason": "unknown scanner type 'nope'"}
    ]
    assert len(judgement.status["sha256"]) == 64
    assert judgement.condition["message"] == "1 scanners active, 1 skipped"


def _deployment(wanted: int, ready: int, updated: int, generation: int = 2, observed: int = 2):
    return {
        "metadata": {"generation": generation},
        "spec": {"replicas": wanted},
        "status": {
            "readyReplicas": ready,
            "updatedReplicas": updated,
            "observedGeneration": observed,
        },
    }


@pytest.mark.parametrize(
    ("deployment", "status", "reason"),
    [
        pytest.param(None, "False", "DeploymentMissing", id="missing"),
        pytest.param(_deployment(2, 2, 2), "True", "ReplicasReady", id="ready"),
        pytest.param(_deployment(2, 1, 2), "False", "ReplicasNotReady", id="not-ready"),
        pytest.param(_deployment(2, 2, 2, 3, 2), "Unknown", "RolloutPending", id="pending"),
        pytest.param(_deployment(0, 0, 0), "True", "ScaledToZero", id="zero"),
    ],
)
def test_deployment_condition(deployment, status, reason) -> None:
    condition, _ = rollout.deployment_condition(deployment, 1)
    assert (condition["status"], condition["reason"]) == (status, reason)


def test_condition_message_is_never_empty() -> None:
    assert conditions.condition("ServiceReady", True, "ServiceApplied", "", 1)["message"] == (
        "ServiceApplied"
    )


def _engine(spec: dict) -> manifests.Engine:
    return manifests.Engine("shop", "team", "uid", crd.RAGEngineSpec.model_validate(spec), "img")


def test_embedded_replicas_beyond_one_are_not_ready_and_say_how_to_fix_it() -> None:
    condition = storage_status.storage_condition(_engine({"replicas": 3}), 4)
    assert (condition["type"], condition["status"]) == ("StorageReady", "False")
    assert condition["reason"] == "EmbeddedStoreSingleReplica"
    message = condition["message"]
    assert "spec.replicas is 3" in message and "runs 1 replica" in message
    assert "spec.storage.vectorDB" in message and "spec.replicas to 1" in message
    ready = conditions.ready(
        [
            conditions.condition("PolicyReady", True, "PolicyValid", "ok", 4),
            condition,
            conditions.condition("DeploymentReady", True, "ReplicasReady", "1/1", 4),
            conditions.condition("ServiceReady", True, "ServiceApplied", "", 4),
        ],
        4,
    )
    assert (ready["status"], ready["reason"]) == ("False", "EmbeddedStoreSingleReplica")
    assert ready["message"] == f"StorageReady: {message}"


@pytest.mark.parametrize(
    ("spec", "reason", "words"),
    [
        pytest.param({}, "EmbeddedStore", "in memory only", id="memory"),
        pytest.param(
            {"storage": {"persistentVolume": {"persistentVolumeClaim": "data"}}},
            "EmbeddedStore",
            "persisted to data",
            id="volume",
        ),
        pytest.param(
            {"replicas": 4, "storage": {"vectorDB": {"engine": "milvus", "url": "http://m:19530"}}},
            "SharedVectorDB",
            "shared by 4 replicas",
            id="milvus",
        ),
    ],
)
def test_storage_ready(spec: dict, reason: str, words: str) -> None:
    condition = storage_status.storage_condition(_engine(spec), 1)
    assert (condition["status"], condition["reason"]) == ("True", reason)
    assert words in condition["message"]


def _every_condition() -> list[dict]:
    """A condition from each producer and each of its outcomes, as the operator writes them."""
    stalled = _deployment(2, 0, 0)
    stalled["status"]["conditions"] = [
        {"type": "Progressing", "reason": "ProgressDeadlineExceeded", "message": "stuck"}
    ]
    deployments = [None, _deployment(2, 2, 2), _deployment(2, 1, 2), stalled]
    deployments += [_deployment(2, 2, 2, 3, 2), _deployment(0, 0, 0)]
    judgements = [
        policy_status.judge(None, None, found=False),
        policy_status.judge("p", None, found=False),
        policy_status.judge("p", {}, found=True),
        policy_status.judge("p", {"guardrails.yaml": "scanners: ["}, found=True),
        policy_status.judge("p", {"guardrails.yaml": "scanners: [{type: nope}]"}, found=True),
        policy_status.judge("p", {"guardrails.yaml": GOOD}, found=True),
    ]
    storage = [{"replicas": 3}, {}, {"storage": {"vectorDB": {"engine": "milvus", "url": "u"}}}]
    made = [rollout.deployment_condition(d, 1)[0] for d in deployments]
    made += [j.condition for j in judgements]
    made += [storage_status.storage_condition(_engine(s), 1) for s in storage]
    # The reasons reconcile writes itself (InvalidSpec, TemplateNotFound, ServiceApplied).
    made += [
        conditions.condition("Ready", False, "InvalidSpec", "spec.replicas: too big", 1),
        conditions.condition("PolicyReady", False, "TemplateNotFound", "not found", 1),
        conditions.condition("ServiceReady", True, "ServiceApplied", "ClusterIP", 1),
    ]
    ready = [conditions.ready([c], 1) for c in made] + [conditions.ready([], 1)]
    return conditions.merge([], made + ready, conditions.now()) + made + ready


def test_every_condition_the_operator_writes_fits_the_metav1_schema() -> None:
    written = _every_condition()
    reasons = {c["reason"] for c in written}
    assert len(reasons) >= 15  # the producers above really ran through their outcomes
    for made in written:
        crd.Condition.model_validate({"lastTransitionTime": conditions.now(), **made})
        assert made.get("observedGeneration", 0) is not None


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param("Spec Invalid", id="space"),
        pytest.param("1Bad", id="leading-digit"),
        pytest.param("Bad:", id="trailing-colon"),
        pytest.param("", id="empty"),
    ],
)
def test_reasons_outside_the_metav1_pattern_are_refused(reason: str) -> None:
    with pytest.raises(ValueError):
        crd.Condition.model_validate(
            {
                "type": "Ready",
                "status": "True",
                "reason": reason,
                "message": "m",
                "lastTransitionTime": conditions.now(),
            }
        )


def test_long_messages_are_cut_to_the_schema_limit_and_no_generation_is_no_key() -> None:
    made = conditions.condition("PolicyReady", False, "PolicyInvalid", "x" * 40000, None)
    assert len(made["message"]) == crd.CONDITION_MESSAGE_MAX
    assert "observedGeneration" not in made
