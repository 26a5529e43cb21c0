"""The assistant-log benchmark: a seeded synthetic chat log (``data``: the generator; ``topics``,
``personal``, ``words``, ``chatter``: what it says) and the benchmark itself (``run``)."""
