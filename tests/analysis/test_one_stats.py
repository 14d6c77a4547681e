"""Every statistical test, interval and correction is imported from one place:
``perflab.analysis.stats``. No other module of perflab imports ``scipy.stats``,
``scipy.special`` or ``statsmodels.stats`` (also inside a function, also as ``sm.stats``), and
none defines its own Welch test, Holm or t interval."""

from __future__ import annotations

import ast

import numpy as np
from statsmodels.stats.multitest import multipletests

from conftest import ROOT
from perflab.analysis.stats import bonferroni

SRC = ROOT / "src" / "perflab"
HOME = SRC / "analysis" / "stats.py"
#: Modules whose functions are tests or distributions (model fits, statsmodels.api, stay free).
FORBIDDEN = ("scipy.stats", "scipy.special", "statsmodels.stats")
#: Packages that hand a forbidden module on as an attribute (``sm.stats.multipletests``).
PARENTS = {"scipy": "scipy", "statsmodels": "statsmodels", "statsmodels.api": "statsmodels"}
#: What the home defines and no other module may define again.
ONE_HOME = {"welch_p", "holm", "adjust", "mean_ci", "paired_t", "bootstrap_ci", "percentile_ci"}


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def stray_statistics(source: str) -> list[str]:
    """Each forbidden import, attribute or definition in ``source``, as text."""
    found, parents = [], {}
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _forbidden(a.name):
                    found.append(f"import {a.name}")
                elif a.name in PARENTS:
                    parents[(a.asname or a.name).split(".")[0]] = PARENTS[a.name]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if _forbidden(node.module) or _forbidden(f"{node.module}.{a.name}"):
                    found.append(f"from {node.module} import {a.name}")
        elif isinstance(node, ast.FunctionDef) and node.name in ONE_HOME:
            found.append(f"def {node.name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ("stats", "special")
            and isinstance(node.value, ast.Name)
            and node.value.id in parents
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_module_but_the_home_imports_a_statistical_test() -> None:
    stray = {
        str(p.relative_to(SRC)): found
        for p in sorted(SRC.rglob("*.py"))
        if p != HOME and (found := stray_statistics(p.read_text()))
    }
    assert stray == {}
    assert stray_statistics(HOME.read_text()) != []  # the home is where they are


def test_the_scan_finds_each_way_of_reaching_a_test() -> None:
    planted = {
        "from scipy import stats": ["from scipy import stats"],
        "def f():\n    from scipy.stats import ttest_ind": ["from scipy.stats import ttest_ind"],
        "import scipy.stats as sps": ["import scipy.stats"],
        "from statsmodels.stats.multitest import multipletests": [
            "from statsmodels.stats.multitest import multipletests"
        ],
        "import statsmodels.api as sm\nsm.stats.multipletests([0.1])": ["sm.stats"],
        "import scipy\nscipy.stats.t.ppf(0.9, 3)": ["scipy.stats"],
        "from scipy import special": ["from scipy import special"],
        "def welch_p(a, b):\n    pass": ["def welch_p"],
    }
    for source, want in planted.items():
        assert stray_statistics(source) == want, source
    fits = "import statsmodels.api as sm\nimport scipy.linalg\nsm.OLS([1.0], [1.0]).fit()"
    assert stray_statistics(fits) == []


def test_the_home_is_importable_from_every_room_that_uses_it() -> None:
    # compare, tune, explain and bisect sit above analysis/: the home may import no room
    # above analysis/ (a test of the graph elsewhere keeps the rooms' order)
    imports = {
        n.module
        for n in ast.walk(ast.parse(HOME.read_text()))
        if isinstance(n, ast.ImportFrom) and n.module
    }
    assert {m for m in imports if m.startswith("perflab")} == set()


def test_bonferroni_is_statsmodels_over_the_whole_family() -> None:
    p = np.random.default_rng(4).random(30) ** 3
    assert np.array_equal(bonferroni(p, 30), multipletests(p, method="bonferroni")[1])
    # a part of the family: each p counts the whole family, not only the part given
    assert np.array_equal(bonferroni(p[:5], 30), np.minimum(1.0, p[:5] * 30))
