"""Every statistical test, interval and correction is imported from one place:
``perflab.analysis.stats``. No other module of perflab (nor a bench) imports ``scipy.stats``,
``scipy.special`` or ``statsmodels.stats`` (also inside a function, also as ``sm.stats``), and
none defines its own Welch test, Holm or t interval."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from conftest import ROOT
from perflab.analysis.stats import (
    Z95,
    bonferroni,
    bonferroni_level,
    holm_levels,
    kendall_tau,
    nested_f,
    norm_ppf,
    spent_level,
    split_level,
    welch_ci,
    wilson_ci,
    z_quantile,
)

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


def _scanned() -> list[Path]:
    """perflab's modules and the benches: a bench's figure is made with the tool's statistics."""
    return [*sorted(SRC.rglob("*.py")), *sorted((ROOT / "bench").glob("*.py"))]


def test_no_module_but_the_home_imports_a_statistical_test() -> None:
    stray = {
        str(p.relative_to(ROOT)): found
        for p in _scanned()
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


#: Names of a significance level: a division of one (but by 2, a two-sided tail) is a
#: multiplicity correction written in place.
LEVEL_NAME = re.compile(r"alpha", re.IGNORECASE)
#: Significance levels written as numbers.
LEVELS = {0.1, 0.05, 0.025, 0.01, 0.005, 0.001}
#: Two-sided normal quantiles of the usual confidences (90 %, 95 %, 98 %, 99 %, 99.9 %): a
#: number this close to one is a z constant of its own.
ZS = [z_quantile(c) for c in (0.9, 0.95, 0.98, 0.99, 0.999)]


def _names_a_level(node: ast.expr) -> bool:
    """Whether the dividend ``node`` is a level: a literal level itself, or arithmetic on a
    name of one (``alpha * share``); what a call or a comprehension computes is not."""
    if isinstance(node, ast.Constant):
        return type(node.value) is float and node.value in LEVELS
    return _level_name(node)


def _level_name(node: ast.expr) -> bool:
    if isinstance(node, ast.BinOp):
        return _level_name(node.left) or _level_name(node.right)
    if isinstance(node, ast.UnaryOp):
        return _level_name(node.operand)
    if isinstance(node, ast.Name):
        return bool(LEVEL_NAME.search(node.id))
    return isinstance(node, ast.Attribute) and bool(LEVEL_NAME.search(node.attr))


def stray_corrections(source: str) -> list[str]:
    """Each multiplicity correction (a level divided by a count) and each z constant (a
    number within 1e-3 of a usual normal quantile, or a name ``Z95``-like bound to a value)
    written in ``source`` instead of called from the home, as text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            two = isinstance(node.right, ast.Constant) and node.right.value == 2
            if not two and _names_a_level(node.left):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Constant) and type(node.value) is float:
            if any(abs(node.value - z) < 1e-3 for z in ZS):
                found.append(repr(node.value))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and re.fullmatch(r"Z_?\d+", n.id):
                        found.append(f"{n.id} =")
    return found


def test_no_module_but_the_home_corrects_for_multiplicity_or_has_a_z() -> None:
    stray = {
        str(p.relative_to(ROOT)): found
        for p in _scanned()
        if p != HOME and (found := stray_corrections(p.read_text()))
    }
    assert stray == {}
    assert stray_corrections(HOME.read_text()) != []  # the home is where they are


def test_the_scan_finds_each_correction_and_z_written_in_place() -> None:
    planted = {
        "level = alpha / k": ["alpha / k"],
        "level = self.alpha / self.planned": ["self.alpha / self.planned"],
        "alpha = ALPHA / LOOKS": ["ALPHA / LOOKS"],
        "early = alpha * SHARE / (n - 1)": ["alpha * SHARE / (n - 1)"],
        "conf = 1 - 0.05 / max(1, n)": ["0.05 / max(1, n)"],
        "q = t_ppf(ALPHA / (2 * n), df)": ["ALPHA / (2 * n)"],
        "Z95 = 1.96": ["Z95 =", "1.96"],
        "Z = 1.959964": ["1.959964"],
        "h = 2.576 * se": ["2.576"],
        "Z_99: float = z_quantile(0.99)": ["Z_99 ="],
    }
    for source, want in planted.items():
        assert sorted(stray_corrections(source)) == sorted(want), source
    # a two-sided tail, a mean, a ratio of other things, a float far from any z: all fine
    fine = [
        "q = norm_ppf(1 - alpha / 2)",  # a two-sided tail
        "m = total / n\nr = base_level / level\nx = 2.0 * 1.5",
        "s = float(p['task_ms']) * 0.001 * tasks / total",  # ms to s, not a level
        "share = sum(abs(e) <= 0.10 for e in errs) / len(errs)",
        "a = f(alpha) / n",  # what a call returns is not the level itself
    ]
    for source in fine:
        assert stray_corrections(source) == [], source


def test_the_corrections_spend_at_most_alpha() -> None:
    assert bonferroni_level(0.05, 5) == pytest.approx(0.01, rel=1e-12)
    assert bonferroni_level(0.05, 0) == pytest.approx(0.05, rel=1e-12)
    assert bonferroni_level(0.05, 1) == pytest.approx(0.05, rel=1e-12)
    early, last = split_level(0.01, 4, 0.2)
    assert 4 * early + last == pytest.approx(0.01, rel=1e-12) and last == pytest.approx(0.008)
    assert split_level(0.01, 0, 0.2) == (0.0, 0.01)
    # an open-ended sequence: the planned ones at alpha / K, then halving, never above alpha
    spent = [spent_level(0.05, 7, i) for i in range(1, 40)]
    assert spent[:6] == pytest.approx([0.05 / 7] * 6, rel=1e-12)
    assert spent[6] == pytest.approx(0.05 / 7 / 2, rel=1e-12)
    assert sum(spent) < 0.05
    assert np.allclose(holm_levels(0.05, 4), [0.0125, 0.05 / 3, 0.025, 0.05], rtol=1e-12)


def test_the_one_z_is_the_normal_quantile() -> None:
    from scipy import stats as sps

    assert np.isclose(Z95, sps.norm.ppf(0.975), rtol=1e-12) and z_quantile(0.95) == Z95
    q = np.array([0.0, 1e-300, 0.025, 0.5, 0.975, 1.0, -0.1, 1.1])
    got = [norm_ppf(v) for v in q]  # the ends (±inf) and outside [0, 1] (NaN) as scipy's
    assert np.allclose(got, sps.norm.ppf(q), rtol=1e-12, equal_nan=True)


def test_what_the_benches_call_equals_what_they_called_before() -> None:
    import pandas as pd
    import statsmodels.formula.api as smf
    from scipy import stats as sps
    from statsmodels.stats.anova import anova_lm
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(7)
    for n1, n2 in [(5, 7), (2, 2), (30, 3)]:
        a, b = rng.normal(0, 1, n1), rng.normal(0.3, 2, n2)
        ci = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.9)
        assert welch_ci(a, b, 0.9) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert wilson_ci(7, 20) == pytest.approx(proportion_confint(7, 20, method="wilson"))
    x, y = rng.normal(size=12), rng.normal(size=12)
    want = sps.kendalltau(x, y)
    assert kendall_tau(x, y) == pytest.approx((want.statistic, want.pvalue))
    df = pd.DataFrame({"u": rng.integers(0, 3, 60), "v": rng.integers(0, 2, 60)})
    df["y"] = 0.3 * df.u + 1.0 * df.u * df.v + rng.normal(0, 1, 60)
    big, small = smf.ols("y ~ C(u) * C(v)", df).fit(), smf.ols("y ~ C(u) + C(v)", df).fit()
    table = anova_lm(small, big)
    f, p = nested_f((small.ssr, small.df_resid), (big.ssr, big.df_resid))
    assert (f, p) == pytest.approx((table["F"].iloc[1], table["Pr(>F)"].iloc[1]), rel=1e-9)
    assert p < 0.05  # the planted interaction is found (the test can fail)
