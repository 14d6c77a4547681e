"""Runners: where a campaign's runs execute (this machine, or Parsl workers elsewhere)."""
