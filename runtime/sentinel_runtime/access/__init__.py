"""Who may do what: named API keys, their scopes and their rate limits.

``keys`` parses the keys file (``RUNTIME_KEYS_FILE``) into a keyring of principals; ``limits``
holds each key's token buckets; ``caller`` carries the request's principal to the layers that
record it (the audit trail, the token meter); ``control`` joins them for the HTTP edge, which
translates its verdicts into 401/403/404/429. Pure code: nothing here knows FastAPI.
"""
