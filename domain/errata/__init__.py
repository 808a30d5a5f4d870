"""Corrections: an error found is corrected by a new event that says what changed and why."""
