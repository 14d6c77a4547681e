"""``perflab bisect``: from a step between two releases or commits to the commits that made
it. ``search`` is the pure noisy bisection; ``commits`` reads and builds a git clone;
``driver`` measures points through the compare gate and keeps the state; ``render`` prints."""
