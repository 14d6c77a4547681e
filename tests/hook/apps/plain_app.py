"""A Python program that uses no task system: it prints a score."""

print(sum(i * i for i in range(10_000)) % 97 + 1)
