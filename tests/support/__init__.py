"""Test support: real servers started on 127.0.0.1 and stopped by the tests."""
