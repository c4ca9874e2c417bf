"""Sentinel operator: reconciles RAGEngine resources into a policy ConfigMap and a runtime."""
