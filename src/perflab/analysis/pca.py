"""PCA of path vectors: one per path from the untreated set, each factor's delta
along it.

The paths are a ``sequences`` campaign's own orders where it has them. A dataset without
them (e.g. an imported CSV of 15,000 runs) gets *reconstructed* paths: chains
∅ = X0 ⊂ X1 ⊂ ... ⊂ Xm of measured sets, each step adding one factor (an exact X -> X+{t}
pair), followed from ∅ until no measured set extends them. Chains are drawn by random walks
(each step uniform over the measured one-factor extensions) and deduplicated, so a lattice
with very many chains gives a sample of them; the JSON says which source and how many.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perflab.analysis.data import Dataset
from perflab.analysis.paths import Values

#: Random walks drawn for reconstructed paths (distinct chains kept).
WALKS = 2000
#: A reconstructed path needs at least this many steps to say anything about trade-offs.
MIN_STEPS = 2


def _sequence_vectors(ds: Dataset, values: Values) -> list[np.ndarray]:
    idx = {f: j for j, f in enumerate(ds.factors)}
    vectors = []
    for order in ds.sequences:
        vec = np.zeros(len(ds.factors))
        cur, ok = 0, True
        if 0 not in values.measured:
            break
        for f in order:
            if f not in idx:
                continue
            nxt = cur | 1 << idx[f]
            if nxt not in values.measured or cur not in values.measured:
                ok = False
                break
            vec[idx[f]] = values.measured[nxt] - values.measured[cur]
            cur = nxt
        if ok:
            vectors.append(vec)
    return vectors


def reconstructed_chains(
    ds: Dataset, values: Values, walks: int = WALKS, seed: int = 0
) -> list[list[int]]:
    """Distinct maximal chains of measured sets from ∅, each step one factor (factor
    indices in the order added), drawn by ``walks`` random walks; [] when ∅ was not run."""
    measured = values.measured
    if 0 not in measured:
        return []
    k = len(ds.factors)
    rng = np.random.default_rng(seed)
    seen: set[tuple[int, ...]] = set()
    chains = []
    for _ in range(walks):
        cur, chain = 0, []
        while True:
            nxt = [j for j in range(k) if not cur >> j & 1 and (cur | 1 << j) in measured]
            if not nxt:
                break
            j = nxt[int(rng.integers(len(nxt)))]
            chain.append(j)
            cur |= 1 << j
        if len(chain) >= MIN_STEPS and tuple(chain) not in seen:
            seen.add(tuple(chain))
            chains.append(chain)
    return chains


def pca_of_paths(ds: Dataset, values: Values) -> dict[str, Any] | None:
    """One vector per path from ∅ (each factor's delta along it, 0 if not on it): the
    campaign's sequences, else reconstructed chains; None with fewer than 3."""
    source = "sequences"
    vectors = _sequence_vectors(ds, values) if ds.sequences else []
    if not ds.sequences:
        source = "reconstructed"
        for chain in reconstructed_chains(ds, values):
            vec = np.zeros(len(ds.factors))
            cur = 0
            for j in chain:
                vec[j] = values.measured[cur | 1 << j] - values.measured[cur]
                cur |= 1 << j
            vectors.append(vec)
    if len(vectors) < 3:
        return None
    from sklearn.decomposition import PCA

    m = np.array(vectors)
    pca = PCA(n_components=min(m.shape))
    scores = pca.fit_transform(m)
    return {
        "n_vectors": len(vectors),
        "source": source,
        "note": (
            "paths are the campaign's own sequences"
            if source == "sequences"
            else "paths reconstructed from exact X -> X+{t} chains of measured sets from the "
            f"untreated set ({len(vectors)} distinct chains from {WALKS} random walks)"
        ),
        "explained_variance_ratio": [float(v) for v in pca.explained_variance_ratio_],
        "loadings": {
            f: [float(c[j]) for c in pca.components_[:2]] for j, f in enumerate(ds.factors)
        },
        "scores": [[float(s) for s in row[:2]] for row in scores],
    }
