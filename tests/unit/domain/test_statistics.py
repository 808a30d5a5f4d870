from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from domain.projections.statistics import agreement, mcnemar_exact, pass_hat_k, percent_text, rank_bands, wilson


@pytest.mark.parametrize("n", [1, 2, 10, 17, 51])
@pytest.mark.parametrize("which", ["zero", "one", "n-1", "n"])
def test_wilson_matches_an_independent_implementation(n: int, which: str) -> None:
    successes = {"zero": 0, "one": min(1, n), "n-1": max(n - 1, 0), "n": n}[which]
    low, high = proportion_confint(successes, n, alpha=0.05, method="wilson")
    interval = wilson(successes, n)
    assert interval.low == pytest.approx(low, abs=1e-12)
    assert interval.high == pytest.approx(high, abs=1e-12)


def test_wilson_is_exact_at_the_ends() -> None:
    assert wilson(0, 17).low == 0.0
    assert wilson(17, 17).high == 1.0


def test_wilson_with_no_runs_says_nothing() -> None:
    assert (wilson(0, 0).low, wilson(0, 0).high) == (0.0, 1.0)


def test_wilson_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson(5, 3)


@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_contains_the_observed_share(counts: tuple[int, int]) -> None:
    successes, n = counts
    interval = wilson(successes, n)
    assert 0.0 <= interval.low <= successes / n <= interval.high <= 1.0


def test_pass_hat_k_by_hand() -> None:
    # 3 passes of 4: pass^1 = 3/4, pass^2 = C(3,2)/C(4,2) = 3/6, pass^3 = 1/4, pass^4 = 0.
    assert pass_hat_k(3, 4, 1) == 0.75
    assert pass_hat_k(3, 4, 2) == 0.5
    assert pass_hat_k(3, 4, 3) == 0.25
    assert pass_hat_k(3, 4, 4) == 0.0
    assert pass_hat_k(5, 5, 5) == 1.0


def test_agreement_is_the_majority_share() -> None:
    assert agreement([True, True, False]) == pytest.approx(2 / 3)
    assert agreement([False, False]) == 1.0


def test_mcnemar_by_hand() -> None:
    # 5 discordant pairs all one way: p = 2 * (1/2)^5 = 0.0625.
    a = [True] * 5 + [True] * 10 + [False] * 2
    b = [False] * 5 + [True] * 10 + [False] * 2
    result = mcnemar_exact(a, b)
    assert (result.only_a, result.only_b) == (5, 0)
    assert result.p_value == pytest.approx(0.0625)
    assert mcnemar_exact(a, a).p_value == 1.0


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_mcnemar_matches_an_independent_implementation(pairs: list[tuple[bool, bool]]) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    table = [
        [sum(1 for x, y in pairs if x and y), sum(1 for x, y in pairs if x and not y)],
        [sum(1 for x, y in pairs if y and not x), sum(1 for x, y in pairs if not x and not y)],
    ]
    expected = mcnemar(table, exact=True).pvalue
    assert mcnemar_exact(a, b).p_value == pytest.approx(min(1.0, expected), abs=1e-12)


def test_rank_bands_tie_models_whose_difference_could_be_chance() -> None:
    strong = [True] * 17
    one_less = [True] * 16 + [False]
    weak = [False] * 17
    bands = rank_bands([("weak", weak), ("one-less", one_less), ("strong", strong)])
    assert bands["strong"] == (1, 2)
    assert bands["one-less"] == (1, 2)
    assert bands["weak"] == (3, 3)


def test_a_share_prints_from_its_exact_value_not_from_its_four_decimals() -> None:
    assert round(14 / 17, 4) == 0.8235 and f"{round(14 / 17, 4) * 100:.1f}" == "82.3"  # the old way, a tenth off
    assert percent_text(Fraction(14, 17)) == "82.4"
    assert percent_text(Fraction(14, 17), 0) == "82"


def test_a_half_is_rounded_up_at_any_places() -> None:
    assert percent_text(Fraction(1, 8)) == "12.5" and percent_text(Fraction(1, 8), 0) == "13"  # round(12.5) is 12
    assert percent_text(Fraction(1, 16)) == "6.3" and percent_text(Fraction(1, 16), 0) == "6"
    assert (percent_text(Fraction(0)), percent_text(Fraction(1)), percent_text(1.0, 0)) == ("0.0", "100.0", "100")


@given(st.integers(min_value=1, max_value=60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.integers(min_value=0, max_value=3))
def test_percent_text_is_decimal_half_up_rounding_of_the_exact_share(case: tuple[int, int], places: int) -> None:
    passed, of = case
    exact = Decimal(passed * 100) / Decimal(of)  # 28 significant digits: far past any tie these shares come near
    assert percent_text(Fraction(passed, of), places) == str(exact.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP))
