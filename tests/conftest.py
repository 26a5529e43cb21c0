"""Settings every test run shares: offline model tables, no hub downloads.

The Redis fixtures live with the integration tests (``tests/integration/conftest.py``);
unit tests need no Redis.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
