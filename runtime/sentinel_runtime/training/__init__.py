"""Training the built-in judge from pinned public sources (``sentinel judge train``).

Needs the ``train`` extra (scikit-learn, pyarrow); the runtime never imports this package.
"""
