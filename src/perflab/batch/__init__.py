"""Batch systems that perflab starts for itself: a throwaway single-node Slurm
(``batch.slurm``) that the Parsl runner and the HTEX target can send work to, in tests and
to try a cluster recipe before using a real one (docs/slurm.md)."""
