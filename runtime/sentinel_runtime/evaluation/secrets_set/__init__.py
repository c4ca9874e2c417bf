"""A labelled evaluation set for the ``secrets`` output scanner, written the way secrets show up
in real assistant answers: a sentence, an env file, a YAML/JSON/INI/TOML block, a shell export,
a ``curl`` header, a Kubernetes manifest, a Markdown table, each around one secret.

Positives carry ``kind`` (one id per provider token format or structural shape), ``secret`` (the
exact string that must not stay visible) and ``text``. Provider tokens are generated from each
provider's documented format (prefix, alphabet, length) with random bodies. The formats, the
framings that carry a token and the word lists live in ``data/secrets_formats.yaml``; this package
reads them and holds the code: charsets by name, the few formats that need code (a JSON body
inside a token), and the structural kinds and negatives. The formats were written from the
providers' own documentation, independently of the scanner's detector table, so the set checks
the detectors rather than mirroring them. Nothing is copied from a public secrets data set:
every body is drawn from ``random.Random(seed)``.

For a webhook the secret is the capability part of the URL (Slack's and Discord's token, Teams'
hex id and connector id, a Workflows ``sig``); for a PEM key it is the key body between BEGIN and
END (as it appears in the text, line breaks included); for a credentialed URL, a Docker/npm/pip
configuration or an assignment it is the value.

Negatives are benign texts that look like secrets to a careless detector: commit hashes,
checksums, UUIDs, image data URIs, pod names, image digests, URLs, public keys and certificates,
lock-file integrity hashes, code that reads a secret from elsewhere, prose about passwords, and
**placeholder credentials** (``postgres://user:password@localhost``, ``<password>``,
``changeme``, ``your-api-key-here``, ``${DB_PASSWORD}``), which we count as benign: redacting them
hides nothing and damages the answer. Negatives hold no e-mail address, phone number, card number
or IP address (the default policy's ``sensitive`` scanner redacts those on purpose); bare 12-digit
AWS account ids do appear, and the bench says which scanner changed a negative.

``generate(seed)`` is pure and deterministic; ``python -m sentinel_runtime.evaluation.secrets_set
--out FILE.jsonl`` writes the set.

The modules, one job each: ``charsets`` (alphabets and random draws), ``templates`` (the data file
and its format templates), ``tokens`` (provider token kinds), ``framing`` (a secret framed as an
answer), ``structural`` (webhooks, connection strings, PEM keys, JWTs, credentialed URLs),
``assignments`` (configuration files and assignments), ``negatives`` (benign families), ``build``
(the set for a seed), ``cli``.
"""

from __future__ import annotations

# The docstring above is bound before these imports run, so ``cli`` can read it.
from .build import (
    KINDS,
    NEGATIVES_PER_FAMILY,
    STRUCTURAL_KINDS,
    URL_KINDS,
    generate,
    negatives,
    positives,
)
from .cli import main
from .negatives import NEGATIVE_FAMILIES
from .sample import BENIGN, PER_KIND, Sample
from .templates import DATA
from .tokens import TOKEN_SPECS, TokenSpec

__all__ = [
    "BENIGN",
    "DATA",
    "KINDS",
    "NEGATIVES_PER_FAMILY",
    "NEGATIVE_FAMILIES",
    "PER_KIND",
    "STRUCTURAL_KINDS",
    "TOKEN_SPECS",
    "URL_KINDS",
    "Sample",
    "TokenSpec",
    "generate",
    "main",
    "negatives",
    "positives",
]
