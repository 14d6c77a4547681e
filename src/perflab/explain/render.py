"""How an explanation reads: the terminal text, Markdown, and an offline HTML page (the step,
the factors ranked by share, the residual)."""

from __future__ import annotations

import html
from typing import Any

from perflab.display import CSP_META


def _pct(x: float) -> str:
    return f"{x * 100:.0f} %"


def p_text(p: float | None) -> str:
    """The step's p; exact data (no test) say so."""
    return f"p = {p:.2g}" if p is not None else "exact data: no test"


def _p(p: float | None) -> str:
    """A Holm p in its column; "exact" where exact data leave nothing to test."""
    return f"{p:>9.2g}" if p is not None else f"{'exact':>9}"


def ranked(result: dict[str, Any], metric: str) -> list[tuple[str, dict[str, Any]]]:
    """The focus stage's factors, claimed first, then by share (largest first)."""
    est = (result.get("focus") or {}).get(metric) or {}
    items = list((est.get("factors") or {}).items())
    return sorted(items, key=lambda kv: (not kv[1]["claimed"], -kv[1]["share"]))


def lines(result: dict[str, Any]) -> list[str]:
    """The explanation as plain text lines (terminal and Markdown share them)."""
    r = result
    out = [
        f"explain {r['package']} {r['a']} → {r['b']} ({r.get('command') or r['target']}"
        f"{'' if r.get('command') else ', ' + str(r['workload'])})"
    ]
    st = r.get("step") or {}
    if "ratio" in st:
        out.append(
            f"step ({st['metric']}): B/A = {st['ratio']:.3f} ({st['confidence']:.0%} CI "
            f"{st['ci_low']:.3f}–{st['ci_high']:.3f}, {p_text(st['p_value'])}, "
            f"{st['n_a']} rounds): {st['verdict']}"
        )
    if st.get("precision"):
        out.append(st["precision"]["line"])
    for side, proof in (st.get("releases") or {}).items():  # a user's program: proven imports
        out.append(
            f"release {side} ({proof['release']}): imported in {proof['proven']} of "
            f"{proof['runs']} ok runs, by {', '.join(proof['processes']) or 'no process'} "
            f"(version {', '.join(proof['versions']) or 'none'})"
        )
    if "failed" in r["verdict"]:
        out.append(r["verdict"])
    if r["verdict"].startswith("step undecided"):
        out.append(
            f"{r['verdict']}: neither a change beyond ±{r['threshold']:.0%} nor none shown "
            "when it stopped; no screen was run (a larger --max-time measures on)"
        )
    if r["verdict"] == "nothing to explain":
        out.append(
            "nothing to explain: the step is within the threshold or its interval covers "
            f"no change (±{r['threshold']:.0%}); no screen was run"
        )
    for stage in ("screen", "focus"):  # --precision: each stage's looks, the error spent
        if ((r.get(stage) or {}).get("precision") or {}).get("line"):
            out.append(r[stage]["precision"]["line"])
    for metric in r["metrics"] if "focus" in r else []:
        out += _focus_lines(r, metric)
    sc = r.get("screen") or {}
    if sc.get("does_not_run"):  # their effects are unknown, not 0: say so, with the cause
        why = sc["effects"][sc["does_not_run"][0]].get("why", "")
        out.append(f"not assessed by the screen: {', '.join(sc['does_not_run'])} ({why[:200]})")
    out += _listed(r)
    out.append(f"{r['runs']} runs in {', '.join(r['campaigns'])}; {r['elapsed_s'] / 60:.1f} min")
    return out


def _focus_lines(r: dict[str, Any], metric: str) -> list[str]:
    est = r["focus"][metric]
    s = est["step"]
    out = [
        "",
        f"[{metric}] step B/A = {s['ratio']:.3f} ({est['confidence']:.0%} CI "
        f"{s['low']:.3f}–{s['high']:.3f}); screen kept {len(r.get('survivors') or [])} of "
        f"{len(r['factors'])} factors ({r['screen']['runs']} runs)",
        f"  {'factor':<48} {'share of step':>14} {'interval':>16} {'p (Holm)':>9}  claim",
    ]
    if not s.get("confirmed", True):
        out[-1] = f"  {'factor':<48} {'ratio to B':>14} {'p (Holm)':>9}"
        out.insert(
            -1,
            "  the step is not seen again here (its interval covers no change): shares are "
            "not defined and nothing is claimed; each factor's ratio to B instead",
        )
        out += [
            f"  {f[:48]:<48} {e['ratio']:>14.3f} {_p(e['p_holm'])}" for f, e in ranked(r, metric)
        ]
        return out
    for f, e in ranked(r, metric):
        out.append(
            f"  {f[:48]:<48} {_pct(e['share']):>14} {_pct(e['low']) + '–' + _pct(e['high']):>16}"
            f" {_p(e['p_holm'])}  {'yes' if e['claimed'] else 'no'}"
        )
    out += overlap_lines(est)
    if not est["factors"]:
        out.append(
            f"  no factor survived the screen: the whole step is unexplained (B/A "
            f"{s['ratio']:.3f}, {s['low']:.3f}–{s['high']:.3f}); see what is listed below"
        )
    if "residual" in est:
        res, j = est["residual"], est["joint"]
        out.append(
            f"  B with every survivor reverted vs A: ratio {res['ratio']:.3f} "
            f"({res['low']:.3f}–{res['high']:.3f}) → {res['verdict']}; together they explain "
            f"{_pct(j['share'])} ({_pct(j['low'])}–{_pct(j['high'])})"
        )
    return out


def overlap_lines(est: dict[str, Any]) -> list[str]:
    """What the claimed factors share: each claimed alone, their shares may count one part
    of the step twice. Said when a claimed revert contains another's module (not varied
    apart), or when their shares add up past 100 % beyond the sum's interval."""
    out = []
    for x, y in est.get("contained") or []:
        out.append(
            f"  {x} and {y} overlap: {x} reverts whole a module {y} changes, so they were "
            "not varied apart and their shares count the same part of the step"
        )
    s = est.get("claimed_sum")
    if s and s["overlap"]:
        out.append(
            f"  the claimed shares overlap: {', '.join(s['factors'])} add up to "
            f"{_pct(s['share'])} ({_pct(s['low'])}–{_pct(s['high'])}) of the step, past "
            "100 %: each was measured reverted alone, so they are not slices of the step that "
            "add up"
        )
    return out


def _listed(r: dict[str, Any]) -> list[str]:
    out = []
    if r.get("listed"):
        out += ["", "listed, not measured:", *(f"  {x}" for x in r["listed"])]
    safety = r.get("safety") or {}
    if safety.get("hidden"):
        out.append(
            f"safety settings: mode {safety['mode']} for "
            + ", ".join(f"{h['name']} ({h['a']} in A, {h['b']} in B)" for h in safety["hidden"])
        )
    return out


def markdown(result: dict[str, Any]) -> str:
    return "```\n" + "\n".join(lines(result)) + "\n```\n"


def _px(v: float, x0: float = 260, scale: float = 300) -> float:
    """A share's x position on the page's axis (0 at x0, 1 at x0 + scale; clipped)."""
    return x0 + scale * max(-0.8, min(1.4, v))


def page(result: dict[str, Any]) -> str:
    """One offline page: the step, the ranked factors with share bars and intervals."""
    body = [f"<h1>{html.escape(lines(result)[0])}</h1>"]
    body.append("<pre>" + html.escape("\n".join(lines(result)[1:])) + "</pre>")
    for metric in result["metrics"] if "focus" in result else []:
        if not result["focus"][metric]["step"].get("confirmed", True):
            continue  # no step, no shares to draw (the text above says so)
        body.append(
            f"<h2>{html.escape(metric)}: share of the step</h2><svg width='640' "
            f"height='{30 + 24 * len(ranked(result, metric))}'>"
        )
        x0, scale = 260, 300
        body.append(f"<line x1='{x0}' x2='{x0}' y1='0' y2='2000' stroke='#999'/>")
        body.append(
            f"<line x1='{x0 + scale}' x2='{x0 + scale}' y1='0' y2='2000' "
            "stroke='#ccc' stroke-dasharray='4'/>"
        )
        for i, (f, e) in enumerate(ranked(result, metric)):
            y = 20 + 24 * i

            colour = "#c0392b" if e["claimed"] else "#7f8c8d"
            body.append(
                f"<text x='0' y='{y + 4}' font-size='11'>{html.escape(f[:40])}</text>"
                f"<line x1='{_px(e['low'])}' x2='{_px(e['high'])}' y1='{y}' y2='{y}' "
                f"stroke='{colour}' stroke-width='2'/><circle cx='{_px(e['share'])}' cy='{y}' "
                f"r='4' fill='{colour}'/>"
            )
        body.append("</svg>")
    return (
        f"<!doctype html><html><head><meta charset='utf-8'>{CSP_META}<title>perflab explain"
        f"</title></head><body style='font-family:sans-serif'>{''.join(body)}</body></html>"
    )
