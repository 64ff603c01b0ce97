"""Writes a line for every process that imports it, saying whether Megatron-Core's strategies were
imported before it was, into the file `$CI_CHECKS_TEST_IMPORTS` names."""

import json
import os
import sys
from pathlib import Path

_LOG = os.environ.get("CI_CHECKS_TEST_IMPORTS")
if _LOG:
    line = {"pid": os.getpid(), "strategies_first": "megatron.core.dist_checkpointing.strategies.torch" in sys.modules}
    with Path(_LOG).open("a", encoding="utf-8") as log:
        log.write(json.dumps(line) + "\n")
