"""Tracking test fixtures live in tests/conftest.py (shared with the runtime tests)."""
