"""One self-contained report.html: figures inlined, no network request of any kind, every
user-supplied string escaped (jinja2 autoescape)."""

from __future__ import annotations

import base64
import json
import time
import warnings
from pathlib import Path

import jinja2
import pandas as pd

from perflab.analysis.data import Dataset
from perflab.report.context import Context, build
from perflab.report.figures import FIGURES

MAX_TABLE_ROWS = 1000

TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>perflab report: {{ title }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; } td, th { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; max-width: 900px; }
.warn { background: #fff4e5; padding: 0.5em 1em; border-left: 4px solid #f0a020; }
.summary td:first-child { font-weight: 600; }
</style></head><body>
<h1>perflab report: {{ title }}</h1>
<table class="summary">
<tr><td>runs</td><td>{{ a.dataset.runs }} ok, {{ a.dataset.failed }} failed, {{ a.dataset.sets }} treatment sets, {{ a.dataset.factors|length }} factors</td></tr>
<tr><td>untreated</td><td>{{ "%.1f"|format(a.base_us) }} µs/task ({{ "%.0f"|format(1e6 / a.base_us) }} tasks/s){% if not a.base_measured %} — predicted, not measured{% endif %}</td></tr>
<tr><td>predicted best</td><td>{{ "%.1f"|format(a.best_us) }} µs/task with {{ a.best_set|join(", ") or "no treatment" }}</td></tr>
<tr><td>speed-up</td><td>{{ "%.2f"|format(a.base_us / a.best_us) }}×</td></tr>
<tr><td>top factors</td><td>{% for f in top %}{{ f.name }} ({{ "%+.1f"|format(f.effect) }} µs/task){% if not loop.last %}, {% endif %}{% endfor %}</td></tr>
{% if a.interactions %}<tr><td>strongest interaction</td><td>{{ a.interactions[0].a }} × {{ a.interactions[0].b }}: {{ "%+.1f"|format(a.interactions[0].effect_us) }} µs/task (95% CI {{ "%.1f"|format(a.interactions[0].ci_low) }} .. {{ "%.1f"|format(a.interactions[0].ci_high) }})</td></tr>{% endif %}
<tr><td>best model</td><td>{{ a.better_model }} (cross-validated RMSE)</td></tr>
</table>
{% for w in warnings %}<p class="warn">{{ w }}</p>{% endfor %}
<h2>Figures</h2>
{% for f in figures %}<figure id="{{ f.name }}"><img alt="{{ f.title }}" src="data:image/png;base64,{{ f.png }}">
<figcaption><b>{{ f.name }}</b> — {{ f.title }}. {{ f.caption }}</figcaption></figure>
{% endfor %}
{% if skipped %}<p>Not drawn (the data cannot show them): {{ skipped|join(", ") }}.</p>{% endif %}
<h2>Per-factor effects</h2>
<table><tr><th>factor</th><th>effect µs/task</th><th>95% CI</th><th>mean delta</th><th>pairs</th></tr>
{% for name, v in factors %}<tr><td>{{ name }}</td><td class="num">{{ "%.1f"|format(v.effect_us) }}</td><td class="num">{{ "%.1f"|format(v.ci_low) }} .. {{ "%.1f"|format(v.ci_high) }}</td><td class="num">{{ "-" if v.mean_delta_us is none else "%.1f"|format(v.mean_delta_us) }}</td><td class="num">{{ v.n_pairs }}</td></tr>
{% endfor %}</table>
<h2>Runs</h2>
<p>{{ runs|length }} of {{ n_runs }} runs{% if runs|length < n_runs %} (the first {{ runs|length }}){% endif %}.</p>
<table><tr>{% for c in run_columns %}<th>{{ c }}</th>{% endfor %}</tr>
{% for r in runs %}<tr>{% for c in run_columns %}<td{% if c in numeric %} class="num"{% endif %}>{{ r[c] }}</td>{% endfor %}</tr>
{% endfor %}</table>
<p style="color:#888">made by perflab in {{ "%.1f"|format(seconds) }} s</p>
</body></html>
"""


def render_figures(ctx: Context, out: Path) -> tuple[list[dict[str, str]], list[str]]:
    """Every registered figure as PNG and SVG in ``out``; returns the drawn and the skipped."""
    out.mkdir(parents=True, exist_ok=True)
    drawn, skipped = [], []
    for name in FIGURES:
        fig = FIGURES.get(name)
        made = fig.make(ctx)
        if made is None:
            skipped.append(name)
            continue
        plot, caption = made
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ext in ("png", "svg"):
                plot.save(
                    out / f"{name}.{ext}",
                    width=fig.width,
                    height=fig.height,
                    dpi=100,
                    verbose=False,
                )
        png = base64.b64encode((out / f"{name}.png").read_bytes()).decode()
        drawn.append({"name": name, "title": fig.title, "caption": caption, "png": png})
    return drawn, skipped


def write_report(
    ds: Dataset,
    runs: pd.DataFrame,
    out_dir: str | Path,
    title: str,
    without: list[str] | None = None,
) -> Path:
    """Analyse, draw every figure, and write ``out_dir/report.html`` (+ figures/, analysis.json)."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    ctx = build(ds, runs, without)
    a = ctx.analysis
    drawn, skipped = render_figures(ctx, out / "figures")
    (out / "analysis.json").write_text(json.dumps(a, default=float, indent=1))
    warn = []
    if a["noise"]["noisy_sets"]:
        warn.append(
            f"{len(a['noise']['noisy_sets'])} treatment sets vary between replicates by "
            f"more than the smallest claimed effect "
            f"({a['noise']['smallest_claimed_effect_us']:.1f} µs/task)."
        )
    if a["dataset"]["dropped"]:
        warn.append(f"Factors never varied, left out: {', '.join(a['dataset']['dropped'])}.")
    if a["dataset"]["failed"]:
        warn.append(
            f"{a['dataset']['failed']} runs failed or timed out (in the run table, not in the analysis)."
        )
    top = sorted(
        ({"name": f, "effect": v["effect_us"]} for f, v in a["factors"].items()),
        key=lambda r: r["effect"],
    )[:3]
    cols = [
        c
        for c in ("timestamp", "status", "us_per_task", "tasks_per_s", "utilization", "treatments")
        if c in runs.columns
    ]
    table = runs[cols].head(MAX_TABLE_ROWS).copy()
    for c in ("us_per_task", "tasks_per_s", "utilization"):
        if c in table:
            table[c] = table[c].map(lambda v: "" if pd.isna(v) else f"{v:,.2f}")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    html = env.from_string(TEMPLATE).render(
        title=title,
        a=a,
        top=top,
        warnings=warn,
        figures=drawn,
        skipped=skipped,
        factors=sorted(a["factors"].items(), key=lambda kv: kv[1]["effect_us"]),
        runs=table.fillna("").to_dict("records"),
        n_runs=len(runs),
        run_columns=cols,
        numeric={"us_per_task", "tasks_per_s", "utilization"},
        seconds=time.perf_counter() - t0,
    )
    path = out / "report.html"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(html)
    tmp.replace(path)
    return path


def report_source(
    source: str,
    store_path: str | None,
    out_dir: str | Path,
    without: list[str] | None = None,
    metric: str = "us_per_task",
) -> Path:
    """Report on a campaign (by name) or a dataset CSV."""
    from perflab.analysis.data import load
    from perflab.dataset import campaign_frame, frame, read_csv
    from perflab.store import Store

    ds = load(source, store_path, metric)
    p = Path(source)
    if p.is_file():
        runs = frame(read_csv(p, p.stem, metric))
    else:
        runs = campaign_frame(Store(store_path), source)
    return write_report(ds, runs, out_dir, source, without)
