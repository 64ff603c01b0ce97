"""A project setup (`--setup tests.ci.checkpoint.patches.hung_setup:start_helpers_and_hang`) that starts
helper processes, one in a session of its own with a child of its own, and then never returns and never
looks at a clock: the rank cannot stop by itself, and only its owner can end it and its helpers."""

import subprocess
import time


def start_helpers_and_hang() -> None:
    subprocess.Popen(["sh", "-c", "sleep 3600 & exec sleep 3600"], start_new_session=True)
    while True:
        time.sleep(3600)
