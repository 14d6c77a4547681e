"""Report: the seed's figures (plotnine), one offline HTML file, and a terminal summary."""

from perflab.report.figures import FIGURES, Figure
from perflab.report.html import write_report

__all__ = ["FIGURES", "Figure", "write_report"]
