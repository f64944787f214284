"""The Gilmore-Gomory test of rar_opt.bounds.binpacking: a refusal is never wrong (brute force),
a packing it reports is one, and it refutes what L2 cannot."""

from __future__ import annotations

from functools import cache

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt.bounds.binpacking import first_fit_decreasing, fits


def _fewest_bins(items: tuple[int, ...], capacity: int) -> int:
    """The fewest bins of ``capacity`` that hold ``items``, by dynamic programming over subsets."""
    n = len(items)

    @cache
    def need(left: int) -> int:
        if left == 0:
            return 0
        first = (left & -left).bit_length() - 1  # the lowest item left opens a bin
        best = n + 1
        rest = left & ~(1 << first)
        sub = rest
        while True:  # every subset of the rest that joins it in that bin
            load = items[first] + sum(items[i] for i in range(n) if sub >> i & 1)
            if load <= capacity:
                best = min(best, 1 + need(rest & ~sub))
            if sub == 0:
                break
            sub = (sub - 1) & rest
        return best

    return need((1 << n) - 1)


@st.composite
def packings(draw):
    capacity = draw(st.integers(6, 30))
    kinds = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(1, capacity), min_size=kinds, max_size=kinds, unique=True))
    demand = draw(st.lists(st.integers(1, 3), min_size=kinds, max_size=kinds))
    return np.array(sizes), np.array(demand), capacity


@settings(max_examples=150, deadline=None)
@given(packings(), st.integers(-1, 1))
def test_a_refusal_is_never_wrong_and_a_packing_is_real(case, shift) -> None:
    sizes, demand, capacity = case
    items = tuple(int(s) for s, d in zip(sizes, demand, strict=True) for _ in range(d))
    fewest = _fewest_bins(items, capacity)
    bins = max(fewest + shift, 1)
    verdict = fits(sizes, demand, capacity, bins)
    if verdict.fits is False:
        assert fewest > bins and verdict.lp_bound > bins
    if verdict.fits is True:
        assert fewest <= bins
    if bins >= fewest + 1:  # room to spare: never refused
        assert verdict.fits is not False


def test_first_fit_decreasing_packs_every_item_within_its_bins() -> None:
    sizes, demand = np.array([7, 5, 3, 2]), np.array([2, 3, 4, 5])
    packed = first_fit_decreasing(sizes, demand, 10)
    assert np.array_equal(sum(packed), demand)
    assert all(int(sizes @ p) <= 10 for p in packed)


def test_the_lp_refutes_what_a_volume_count_allows() -> None:
    # seven items of 4 into bins of 10: their volume, 28, fits three bins, but a bin takes
    # at most two of them, so the LP needs 7 / 2 > 3 bins; six of them fit (FFD)
    verdict = fits(np.array([4]), np.array([7]), 10, 3)
    assert verdict.fits is False and verdict.lp_bound > 3
    assert fits(np.array([4]), np.array([6]), 10, 3).fits is True
    # three items of 6 and three of 5 into bins of 11: volume 33 = 3 bins; each bin takes
    # one 6 and one 5, so three bins do it (FFD finds them)
    assert fits(np.array([6, 5]), np.array([3, 3]), 11, 3).fits is True
    # an item longer than the bin: refused outright
    assert fits(np.array([12]), np.array([1]), 11, 5).fits is False
