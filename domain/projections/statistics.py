"""Statistics for repeat runs: Wilson intervals, pass^k, agreement, an exact McNemar test and rank bands.

Pure functions over counts; no I/O. The formulas are the textbook ones, written out so auditors can check them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import msgspec

Z95 = 1.959963984540054
"""The 97.5th percentile of the standard normal distribution."""


class Interval(msgspec.Struct, frozen=True):
    low: float
    high: float


def wilson(successes: int, n: int, z: float = Z95) -> Interval:
    """Wilson score interval for a proportion (95% by default). n = 0 gives the whole range [0, 1]."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return Interval(0.0, 1.0)
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At 0 and n the bounds are exactly 0 and 1; floating point would leave 0.9999999999999999.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low, high)


ARC_Z = 1.96
"""ARC's z for its 95% intervals (abab7575/arc-open, benchmark/src/stats.ts), the rounded textbook value."""


class ArcRate(msgspec.Struct, frozen=True):
    """A rate as ARC's rows show it (stats.ts `wilson`, submission.ts `publicSubmission`), in tenths of a percent
    (ints, so no float formatting is involved): rounded halves up, the interval's bounds clamped to 0..100 %."""

    rate: int
    low: int
    high: int


def arc_rate(successes: int, n: int) -> ArcRate | None:
    """ARC's rate and Wilson interval (z = 1.96) for successes of n; None when n is 0."""
    if n <= 0:
        return None
    p = successes / n
    z2 = ARC_Z * ARC_Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = ARC_Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return ArcRate(_tenths(p * 1000), _tenths(max(0.0, min(1.0, centre - half)) * 1000),
                   _tenths(max(0.0, min(1.0, centre + half)) * 1000))


def _tenths(thousandths: float) -> int:
    """`Math.round(x)`: halves toward +infinity, as JavaScript rounds (Python's round() goes to even)."""
    floor = math.floor(thousandths)
    return int(floor + 1 if thousandths - floor >= 0.5 else floor)


def percent_text(share: Fraction | float, places: int = 1) -> str:
    """A share (0 to 1) as a percentage rounded half up from its exact value, never from a share already rounded:
    14/17 is 82.352...% -> "82.4" (its four decimals, 0.8235, would print 82.3), 1/8 -> "12.5", or "13" with no
    decimals. A float (a Wilson bound) is taken at its exact binary value. The site prints every share this way,
    so a chart and a table of the same share agree."""
    scaled = Fraction(share) * 100 * 10**places
    whole = math.floor(scaled + Fraction(1, 2))
    if places == 0:
        return str(whole)
    digits = str(whole).rjust(places + 1, "0")
    return f"{digits[:-places]}.{digits[-places:]}"


def tenths_text(tenths: int) -> str:
    """A percentage in tenths as JavaScript writes `Math.round(x) / 10`: 583 is 58.3, 580 is 58."""
    whole, tenth = divmod(tenths, 10)
    return f"{whole}.{tenth}" if tenth else str(whole)


def pass_hat_k(successes: int, n: int, k: int) -> float:
    """pass^k: the chance that k runs drawn without replacement from the n made all pass (C(c,k)/C(n,k)).

    It measures consistency: an agent that passes 3 of 4 repeats has pass^1 0.75 but pass^4 0.
    """
    if not 0 <= successes <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= successes <= n and 1 <= k <= n, got c={successes}, n={n}, k={k}")
    return math.comb(successes, k) / math.comb(n, k)


def agreement(outcomes: Sequence[bool]) -> float:
    """Share of repeats that agree with the majority outcome (1.0 when all repeats agree)."""
    if not outcomes:
        raise ValueError("no repeats")
    passes = sum(outcomes)
    return max(passes, len(outcomes) - passes) / len(outcomes)


class McNemar(msgspec.Struct, frozen=True):
    only_a: int
    """Stations that A passed and B did not."""
    only_b: int
    """Stations that B passed and A did not."""
    p_value: float
    """Exact two-sided p-value (binomial test on the discordant pairs)."""


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """Exact McNemar test for two models on the same stations (paired outcomes)."""
    if len(a) != len(b):
        raise ValueError("both models must be measured on the same stations")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    discordant = only_a + only_b
    if discordant == 0:
        return McNemar(only_a, only_b, 1.0)
    tail = sum(math.comb(discordant, i) for i in range(min(only_a, only_b) + 1)) / 2**discordant
    return McNemar(only_a, only_b, min(1.0, 2 * tail))


def rank_bands(
    scores: Sequence[tuple[str, Sequence[bool]]], alpha: float = 0.05
) -> dict[str, tuple[int, int]]:
    """For each model (in score order), the best and worst place it could hold once differences that could be
    chance are ignored: two models whose paired McNemar test has p >= alpha are treated as tied.

    `scores` pairs each model with its outcomes on the same stations in the same order.
    """
    ordered = sorted(scores, key=lambda item: (-sum(item[1]), item[0]))
    bands: dict[str, tuple[int, int]] = {}
    for name, outcomes in ordered:
        better = sum(
            1 for other, theirs in ordered
            if other != name and mcnemar_exact(theirs, outcomes).p_value < alpha and sum(theirs) > sum(outcomes)
        )
        not_worse = sum(
            1 for other, theirs in ordered
            if other != name and not (mcnemar_exact(theirs, outcomes).p_value < alpha and sum(theirs) < sum(outcomes))
        )
        bands[name] = (better + 1, not_worse + 1)
    return bands
