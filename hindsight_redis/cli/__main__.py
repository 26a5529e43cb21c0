"""``python -m hindsight_redis.cli``."""

import sys

from hindsight_redis.cli.app import main

sys.exit(main())
