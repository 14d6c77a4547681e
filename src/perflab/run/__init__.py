"""One measured run: what to run (``spec``), the caller side (``measure``), the supervised
process tree (``supervisor``, ``child``), and the run record (``record``)."""

import time as _time

#: When this package was first imported in this process: in the measured child, the end of
#: its interpreter's own start-up (``measurement.phases``: interpreter vs imports).
T_IMPORT = _time.time()
