"""LLM and embedding providers."""
