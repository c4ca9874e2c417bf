"""Secret detectors the ``secrets`` scanner runs beside detect-secrets' plugins.

Each family finds secrets in one of the forms they take in answers (docs/contracts.md names
the scanner; docs/configuration.md, "Secrets", says what each family covers):

* ``tokens``: provider token formats from a data table (``data/provider_tokens.yaml``),
  found through an Aho-Corasick prefilter on their literal prefixes;
* ``private_keys``: PEM private-key blocks, BEGIN to END (or the body left when a BEGIN line
  was already redacted, or a block cut short);
* ``jwt``: JSON Web Tokens, all three segments, when the header decodes to JSON with ``alg``;
* ``url_credentials``: the password of ``scheme://user:password@host``;
* ``basic_auth``: ``user:password`` in base64 (Docker/npm ``auth``, ``Basic``) and on
  command lines (``curl -u``, ``poetry config http-basic``);
* ``assignments``: values assigned to key-like names (``password``, ``*_TOKEN``, ``api_key``,
  ``auth``, ...) in env, YAML, JSON, INI, CLI-flag and prose forms, judged by a value rule.

Every detector is a pure function of the text, linear in its length; each reports spans.
"""

from __future__ import annotations

from sentinel_runtime.guardrails.detectors.base import Detection
from sentinel_runtime.guardrails.detectors.registry import FAMILIES, DetectorSet, detector_set

__all__ = ["FAMILIES", "Detection", "DetectorSet", "detector_set"]
