"""Best-set search: ``stages`` (the pure screen → focus → confirm algorithm),
``speedup`` (measured speed-ups with intervals), ``final`` (the final blocks), ``driver``
(stages as resumable campaigns), ``truths`` (synthetic truths for the bench and tests)."""
