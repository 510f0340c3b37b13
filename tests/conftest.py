"""Shared fixtures. The ``fake_llm`` fixture comes from parley's pytest plugin (entry point)."""
