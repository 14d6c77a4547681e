"""Runs one pickled call on a Work Queue worker: ``python -m perflab.engines._wq_task KEY BLOB``.

The call (function by reference, arguments) is base64 pickle in argv; the result is printed
the same way on the last stdout line, followed by its HMAC-SHA256 under the run's key (read
from the 0600 file KEY), so the driver unpickles only what this process produced.
"""

import base64
import hashlib
import hmac
import pickle
import sys


def main() -> int:
    with open(sys.argv[1], "rb") as f:
        key = f.read()
    fn, args = pickle.loads(base64.b64decode(sys.argv[2]))
    blob = base64.b64encode(pickle.dumps(fn(*args)))
    print(blob.decode(), hmac.new(key, blob, hashlib.sha256).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main())
