"""Weeks: ISO weeks, the unit in which results count; publishing a week and the audit file that lets anyone recompute
what was published."""
