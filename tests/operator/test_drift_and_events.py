"""Pure logic behind drift repair, SecretsReady and the Events of condition changes."""

from __future__ import annotations

import copy

import pytest
from kubernetes.client.rest import ApiException

from sentinel_operator import conditions, crd, k8s, manifests, reconcile, secrets_status
from sentinel_operator.config import OperatorSettings


def _engine(spec: dict) -> manifests.Engine:
    return manifests.Engine(
        "shop", "team", "uid", crd.RAGEngineSpec.model_validate(spec), "sentinel:1"
    )


def _as_stored(obj: dict) -> dict:
    """What the server hands back: the builders' object plus defaults it fills in."""
    stored = copy.deepcopy(obj)
    spec = stored["spec"]
    if stored["kind"] == "Deployment":
        spec["progressDeadlineSeconds"] = 600
        pod = spec["template"]["spec"]
        pod["restartPolicy"] = "Always"
        container = pod["containers"][0]
        container["terminationMessagePath"] = "/dev/termination-log"
        container["livenessProbe"]["successThreshold"] = 1
        for env in container["env"]:
            if env.get("value") == "":
                del env["value"]  # omitempty: the server drops an empty value
        for volume in pod["volumes"]:
            if "configMap" in volume:
                volume["configMap"]["defaultMode"] = 420
    else:
        spec["clusterIP"] = "10.0.0.7"
        spec["sessionAffinity"] = "None"
    return stored


def test_objects_as_the_server_stores_them_have_not_drifted() -> None:
    engine = _engine({"guardrails": {"enabled": False}, "serviceType": "NodePort"})
    for built in (manifests.deployment(engine), *manifests.services(engine)):
        assert manifests.drift(built, _as_stored(built)) == []


def test_hand_edits_are_named_with_their_value_and_the_wanted_one() -> None:
    engine = _engine({"guardrails": {"enabled": True}})
    desired = manifests.deployment(engine)
    live = _as_stored(desired)
    container = live["spec"]["template"]["spec"]["containers"][0]
    container["image"] = "evil/img"
    container["env"][0]["value"] = "false"
    container["ports"][0]["containerPort"] = 6000
    live["spec"]["replicas"] = 3
    found = manifests.drift(desired, live)
    assert "spec.replicas: 3 (want 1)" in found
    assert "spec.template.spec.containers[0].image: 'evil/img' (want 'sentinel:1')" in found
    assert "spec.template.spec.containers[0].env[0].value: 'false' (want 'true')" in found
    assert any(".ports[0].containerPort: 6000 (want 5000)" in line for line in found)

    service = manifests.service(engine)
    stored = _as_stored(service)
    stored["spec"]["ports"][0]["targetPort"] = 9999
    stored["spec"]["selector"] = {"app": "other"}
    found = manifests.drift(service, stored)
    assert "spec.ports[0].targetPort: 9999 (want 'http')" in found
    assert any(line.startswith("spec.selector.rag.sentinel.dev/engine: None") for line in found)


def test_quantities_the_server_wrote_in_canonical_form_have_not_drifted() -> None:
    engine = _engine({"resources": {"requests": {"cpu": 0.5, "memory": "1024Mi"}}})
    desired = manifests.deployment(engine)
    live = _as_stored(desired)
    requests = live["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    requests.update(cpu="500m", memory="1Gi")
    assert manifests.drift(desired, live) == []
    requests["memory"] = "2Gi"
    assert manifests.drift(desired, live) == [
        "spec.template.spec.containers[0].resources.requests.memory: '2Gi' (want '1024Mi')"
    ]


def test_a_removed_env_var_is_drift() -> None:
    desired = manifests.deployment(_engine({}))
    live = _as_stored(desired)
    live["spec"]["template"]["spec"]["containers"][0]["env"].pop()
    [line] = manifests.drift(desired, live)
    assert line.startswith("spec.template.spec.containers[0].env: [")


def _exists(answers: dict[str, bool | None]):
    """What a metadata-only GET saw of each named Secret, key names unknown."""
    return lambda namespace, name: k8s.SecretSeen(answers[name])


@pytest.mark.parametrize(
    ("spec", "answers", "status", "reason"),
    [
        pytest.param({}, {}, "True", "NoSecretsReferenced", id="none"),
        pytest.param(
            {"inferenceService": {"url": "u", "accessSecret": "llm"}},
            {"llm": True},
            "True",
            "SecretsFound",
            id="found",
        ),
        pytest.param(
            {"inferenceService": {"url": "u", "accessSecret": "llm"}},
            {"llm": False},
            "False",
            "AccessSecretMissing",
            id="missing",
        ),
        pytest.param(
            {"inferenceService": {"url": "u", "accessSecret": "llm"}},
            {"llm": None},
            "Unknown",
            "SecretsUnchecked",
            id="forbidden",
        ),
        pytest.param(
            {
                "inferenceService": {"url": "u", "accessSecret": "llm"},
                "embedding": {"remote": {"url": "e", "accessSecret": "emb"}},
                "storage": {"vectorDB": {"engine": "milvus", "url": "m", "accessSecret": "db"}},
            },
            {"llm": True, "emb": None, "db": False},
            "False",
            "AccessSecretMissing",
            id="missing-beats-unchecked",
        ),
    ],
)
def test_secrets_condition(spec, answers, status, reason) -> None:
    parsed = crd.RAGEngineSpec.model_validate(spec)
    made = secrets_status.secrets_condition(parsed, "team", _exists(answers), 2)
    assert (made["type"], made["status"], made["reason"]) == ("SecretsReady", status, reason)
    crd.Condition.model_validate({"lastTransitionTime": conditions.now(), **made})


def test_missing_secret_message_names_the_field_and_the_secret() -> None:
    parsed = crd.RAGEngineSpec.model_validate(
        {"storage": {"vectorDB": {"engine": "milvus", "url": "m", "accessSecret": "db"}}}
    )
    made = secrets_status.secrets_condition(parsed, "team", _exists({"db": False}), 1)
    assert made["message"].startswith(
        "storage.vectorDB.accessSecret: Secret db not found in namespace team"
    )


GUARD = {"url": "http://guard:8000/v1", "family": "llama-guard-3", "accessSecret": "guard-key"}


def _seen(secrets: dict[str, frozenset[str] | bool | None]):
    """Each named Secret as found with these key names (None: names unknown; False: absent)."""

    def look(namespace: str, name: str) -> k8s.SecretSeen:
        keys = secrets[name]
        return k8s.SecretSeen(False) if keys is False else k8s.SecretSeen(True, keys)

    return look


@pytest.mark.parametrize(
    ("secrets", "status", "reason", "fragment"),
    [
        pytest.param(
            {"guard-key": False},
            "False",
            "AccessSecretMissing",
            "guard.accessSecret: Secret guard-key not found in namespace team: the runtime pods "
            "cannot start until it exists",
            id="secret-missing",
        ),
        pytest.param(
            {"guard-key": frozenset({"token"})},
            "False",
            "AccessSecretKeyMissing",
            "guard.accessSecret: Secret guard-key has no key GUARD_ACCESS_SECRET: the runtime "
            "pods cannot start until the key is added",
            id="key-missing",
        ),
        pytest.param(
            {"guard-key": frozenset({"GUARD_ACCESS_SECRET", "other"})},
            "True",
            "SecretsFound",
            "Secret guard-key exists",
            id="key-there",
        ),
        pytest.param(
            {"guard-key": None},
            "True",
            "SecretsFound",
            "Secret guard-key exists",
            id="keys-unknown",
        ),
    ],
)
def test_the_guard_secret_is_judged_like_the_others(secrets, status, reason, fragment) -> None:
    parsed = crd.RAGEngineSpec.model_validate({"guard": GUARD})
    made = secrets_status.secrets_condition(parsed, "team", _seen(secrets), 3)
    assert (made["type"], made["status"], made["reason"]) == ("SecretsReady", status, reason)
    assert made["message"] == fragment
    crd.Condition.model_validate({"lastTransitionTime": conditions.now(), **made})


@pytest.mark.parametrize(
    ("auth", "secrets", "status", "reason", "message"),
    [
        pytest.param(
            {"name": "tenants"},
            {"tenants": False},
            "False",
            "AccessSecretMissing",
            "auth.keysSecret: Secret tenants not found in namespace team: the runtime pods "
            "cannot start until it exists",
            id="secret-missing",
        ),
        pytest.param(
            {"name": "tenants"},
            {"tenants": frozenset({"other.yaml"})},
            "False",
            "AccessSecretKeyMissing",
            "auth.keysSecret: Secret tenants has no key keys.yaml: the runtime pods cannot "
            "start until the key is added",
            id="default-key-missing",
        ),
        pytest.param(
            {"name": "tenants", "key": "other.yaml"},
            {"tenants": frozenset({"other.yaml"})},
            "True",
            "SecretsFound",
            "Secret tenants exists",
            id="named-key-there",
        ),
    ],
)
def test_the_keys_secret_is_judged_like_the_access_secrets(
    auth, secrets, status, reason, message
) -> None:
    parsed = crd.RAGEngineSpec.model_validate({"auth": {"keysSecret": auth}})
    made = secrets_status.secrets_condition(parsed, "team", _seen(secrets), 3)
    assert (made["type"], made["status"], made["reason"]) == ("SecretsReady", status, reason)
    assert made["message"] == message


def test_one_secret_for_two_fields_is_checked_for_each_fields_key() -> None:
    # A team that keeps the LLM's and the guard's tokens in one Secret.
    spec = {
        "inferenceService": {"url": "http://llm/v1", "accessSecret": "tokens"},
        "guard": {**GUARD, "accessSecret": "tokens"},
    }
    parsed = crd.RAGEngineSpec.model_validate(spec)
    asked: list[str] = []

    def look(namespace: str, name: str) -> k8s.SecretSeen:
        asked.append(name)
        return k8s.SecretSeen(True, frozenset({"LLM_ACCESS_SECRET"}))

    made = secrets_status.secrets_condition(parsed, "team", look, 1)
    assert asked == ["tokens"]  # one GET per Secret
    assert made["reason"] == "AccessSecretKeyMissing"
    assert "guard.accessSecret: Secret tokens has no key GUARD_ACCESS_SECRET" in made["message"]
    assert "inferenceService" not in made["message"]


def test_a_missing_secret_comes_before_a_missing_key() -> None:
    spec = {"inferenceService": {"url": "http://llm/v1", "accessSecret": "llm"}, "guard": GUARD}
    parsed = crd.RAGEngineSpec.model_validate(spec)
    made = secrets_status.secrets_condition(
        parsed, "team", _seen({"llm": False, "guard-key": frozenset({"x"})}), 1
    )
    assert made["reason"] == "AccessSecretMissing"
    assert made["message"] == (
        "inferenceService.accessSecret: Secret llm not found in namespace team; "
        "guard.accessSecret: Secret guard-key has no key GUARD_ACCESS_SECRET: the runtime pods "
        "cannot start until each Secret exists with its key"
    )


@pytest.mark.parametrize(
    ("managed", "keys"),
    [
        pytest.param(
            [{"manager": "kubectl-create", "fieldsV1": {"f:data": {".": {}, "f:A": {}}}}],
            {"A"},
            id="created",
        ),
        pytest.param(
            [
                {"fieldsV1": {"f:data": {".": {}, "f:A": {}}, "f:type": {}}},
                {"fieldsV1": {"f:data": {"f:B": {}}}},
            ],
            {"A", "B"},
            id="two-writers",
        ),
        # Server-side apply of stringData records it as written (the server stores data).
        pytest.param([{"fieldsV1": {"f:stringData": {"f:C": {}}}}], {"C"}, id="apply-stringData"),
        pytest.param([{"fieldsV1": {"f:type": {}}}], None, id="no-data-named"),
        pytest.param([], None, id="stripped"),
        pytest.param(None, None, id="absent"),
    ],
)
def test_secret_key_names_come_from_managed_fields(managed, keys) -> None:
    found = k8s.data_keys({"name": "s", "managedFields": managed})
    assert found == (None if keys is None else frozenset(keys))


def test_engines_waiting_on_a_secret_key_are_rechecked() -> None:
    waiting = {"conditions": _components(SecretsReady=(False, "AccessSecretKeyMissing"))}
    assert reconcile.needs_recheck(waiting)


def _components(**overrides: tuple[bool | None, str]) -> list[dict]:
    made = {
        "PolicyReady": (True, "PolicyValid"),
        "SecretsReady": (True, "SecretsFound"),
        "StorageReady": (True, "EmbeddedStore"),
        "DeploymentReady": (False, "ReplicasNotReady"),
        "ServiceReady": (True, "ServiceApplied"),
    } | overrides
    return [conditions.condition(t, s, r, f"{t} says {r}", 1) for t, (s, r) in made.items()]


def test_ready_names_the_cause_before_its_symptom() -> None:
    parts = _components(SecretsReady=(False, "AccessSecretMissing"))
    ready = conditions.ready(parts, 1)
    assert (ready["status"], ready["reason"]) == ("False", "AccessSecretMissing")
    parts = _components(
        PolicyReady=(False, "PolicyInvalid"), SecretsReady=(False, "AccessSecretMissing")
    )
    assert conditions.ready(parts, 1)["reason"] == "PolicyInvalid"


def test_unchecked_secrets_do_not_hold_ready_back() -> None:
    parts = _components(
        SecretsReady=(None, "SecretsUnchecked"), DeploymentReady=(True, "ReplicasReady")
    )
    assert conditions.ready(parts, 1)["status"] == "True"
    without = [c for c in parts if c["type"] != "SecretsReady"]
    assert conditions.ready(without, 1)["status"] == "True"


def test_events_follow_changes_of_condition_not_passes() -> None:
    before = _components()
    broken = _components(PolicyReady=(False, "PolicyInvalid"))
    assert conditions.changes(before, broken) == [
        ("Warning", "PolicyInvalid", "PolicyReady: PolicyReady says PolicyInvalid")
    ]
    assert conditions.changes(broken, broken) == []  # the same problem at the next pass
    fixed = conditions.changes(broken, before)
    assert fixed == [
        ("Normal", "PolicyValid", "PolicyReady is True again (was PolicyInvalid): "
         "PolicyReady says PolicyValid")
    ]  # fmt: skip
    # A rollout in progress is no news; a stalled one is.
    assert conditions.changes(None, before) == []
    stalled = _components(DeploymentReady=(False, "ProgressDeadlineExceeded"))
    assert [c[1] for c in conditions.changes(before, stalled)] == ["ProgressDeadlineExceeded"]
    ready = _components(DeploymentReady=(True, "ReplicasReady"))
    assert conditions.changes(before, ready) == []  # pods became ready: the usual course


def test_a_new_problem_under_the_same_reason_is_announced() -> None:
    first = [conditions.condition("PolicyReady", False, "PolicyInvalid", "line 1", 1)]
    second = [conditions.condition("PolicyReady", False, "PolicyInvalid", "line 7", 1)]
    assert conditions.changes(first, second) == [
        ("Warning", "PolicyInvalid", "PolicyReady: line 7")
    ]


def test_engines_waiting_on_what_no_watch_reports_are_rechecked() -> None:
    waiting = {"conditions": _components(SecretsReady=(False, "AccessSecretMissing"))}
    assert reconcile.needs_recheck(waiting)
    assert not reconcile.needs_recheck({"conditions": _components()})
    assert not reconcile.needs_recheck({})


class _Status:
    """k8s.update_status over one in-memory status (what the apiserver would store)."""

    def __init__(self, status: dict) -> None:
        self.status = status

    def __call__(self, namespace: str, name: str, mutate):
        self.status = mutate(dict(self.status))
        return {"status": self.status}


def test_a_repair_that_fails_says_so_in_status_and_is_rechecked(monkeypatch) -> None:
    def refused(obj: dict) -> dict:
        raise ApiException(status=403, reason="Forbidden")

    stored = _Status({"observedGeneration": 1, "conditions": _components()})
    monkeypatch.setattr(k8s, "apply", refused)
    monkeypatch.setattr(k8s, "update_status", stored)
    body = {"metadata": {"name": "shop", "namespace": "team", "uid": "uid"}, "spec": {}}
    settings = OperatorSettings(OPERATOR_NAMESPACE="ops")

    notices = reconcile.repair_service(body, "shop", None, settings)
    service = next(c for c in stored.status["conditions"] if c["type"] == "ServiceReady")
    assert (service["status"], service["reason"]) == ("False", "ServiceMissing")
    assert (
        "Service shop was deleted and could not be put back: 403 Forbidden" in (service["message"])
    )
    assert [(n.type, n.reason) for n in notices] == [("Warning", "ServiceMissing")]
    assert reconcile.needs_recheck(stored.status)

    # A namespace being deleted is no failure to report.
    gone = ApiException(status=403, reason="Forbidden")
    gone.body = '{"details": {"causes": [{"reason": "NamespaceTerminating"}]}}'
    assert k8s.namespace_terminating(gone) and not k8s.namespace_terminating(
        ApiException(status=403, reason="Forbidden")
    )


def test_a_guard_url_that_is_no_http_url_is_an_invalid_spec_in_status(monkeypatch) -> None:
    # The apiserver refuses it by the schema's pattern; an engine stored before the CRD had
    # the pattern still reaches the operator, which reports it and applies nothing.
    def never(obj: dict) -> dict:
        raise AssertionError(f"applied {obj['kind']} of an invalid spec")

    stored = _Status({})
    monkeypatch.setattr(k8s, "apply", never)
    monkeypatch.setattr(k8s, "update_status", stored)
    body = {
        "metadata": {"name": "shop", "namespace": "team", "uid": "uid", "generation": 4},
        "spec": {"guard": {"url": "llama-guard:8000/v1", "family": "llama-guard-3"}},
    }
    notices = reconcile.reconcile(body, OperatorSettings(OPERATOR_NAMESPACE="ops"))
    [ready] = stored.status["conditions"]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "False", "InvalidSpec")
    assert ready["message"].startswith("spec.guard.url: ")
    assert "'llama-guard:8000/v1' is not an http:// or https:// URL" in ready["message"]
    assert "e.g. http://llama-guard:8000/v1" in ready["message"]
    assert stored.status["observedGeneration"] == 4
    assert [(n.type, n.reason) for n in notices] == [("Warning", "InvalidSpec")]
