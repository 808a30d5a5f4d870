"""Numbered SQL files for the read models, applied by `canitbuy db migrate`."""
