"""Pure projections of the record: a fold over the log into facts, and the public documents made from them.

No clock, no randomness, no I/O: the same events give the same bytes.
"""
