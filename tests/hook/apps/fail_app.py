"""A program that fails: it writes why on stderr and exits 3."""

import sys

print("fail_app: the input file is missing", file=sys.stderr)
sys.exit(3)
