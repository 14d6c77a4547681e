"""``--search staged``: screen → focus → confirm rounds (``tune/stages.py``)."""

from perflab.tune.searches import SEARCHES
from perflab.tune.stages import Tuner

SEARCHES.register(Tuner)
