"""A program that hangs (its run must end as a timeout, with what it wrote)."""

import sys
import time

print("started, now waiting forever", file=sys.stderr, flush=True)
time.sleep(3600)
