"""The peers benchmark (``run``): the protocol every system follows (``protocol``, standard
library only), the shared embeddings endpoint (``embed_server``) and one adapter per system,
each run as a script in its system's venv (``install.sh``)."""
