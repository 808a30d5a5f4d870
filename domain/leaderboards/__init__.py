"""ARC and the leaderboard: ARC's test sets, submission format and validator, ARC batches, leaderboard submissions and
their verification, lab receipts and agent keys, and tests checked by hand."""
