"""perflab explain: which change between two releases (a default, a function) costs how much."""
