"""The HTTP layer: the only place that knows about requests and responses."""
