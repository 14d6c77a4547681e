"""perflab: a performance laboratory for high-throughput task systems.

The Python API mirrors the CLI::

    from perflab import RunSpec, measure
    record = measure(RunSpec(target="parsl-htex", workload="noop", time_s=5))
    print(record.us_per_task)
"""

from perflab.errors import PerflabError
from perflab.measure import measure, measure_repeated
from perflab.record import RunRecord
from perflab.spec import RunSpec

__version__ = "0.1.0"
__all__ = ["PerflabError", "RunRecord", "RunSpec", "measure", "measure_repeated", "__version__"]
