"""``--search optuna``: TPE trials, the best few re-measured (``tune/optuna_search.py``)."""

from perflab.tune.optuna_search import OptunaSearch
from perflab.tune.searches import SEARCHES

SEARCHES.register(OptunaSearch)
