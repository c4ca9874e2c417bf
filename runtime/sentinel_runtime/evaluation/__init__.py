"""``sentinel eval``: safety measurements over the public data sets in ``shared/datasets``."""
