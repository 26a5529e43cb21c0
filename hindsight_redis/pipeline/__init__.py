"""The worker pipeline: stages, their assembly, atomic commits and the worker loop."""
