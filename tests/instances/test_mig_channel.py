"""The create/destroy channel (instances/mig_channel.py) against a brute-force reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from instances.mig_channel import OpChannel

# times on a coarse grid so that touching intervals and zero lengths are frequent
_time = st.integers(0, 40).map(lambda k: k / 4)
_ops = st.lists(st.tuples(_time, st.one_of(st.just(0.0), _time)), min_size=1, max_size=40)


def _fits(booked, t, d):
    """Nothing booked overlaps [t, t + d); a zero-length op must not sit strictly inside an interval."""
    for s, e in booked:
        if d > 0 and s < t + d and e > t:  # (a point interval at s: blocks when t < s < t + d)
            return False
        if d == 0 and s < t < e:
            return False
    return True


def _reference(booked, earliest, d):
    # the earliest feasible start is earliest itself or the end of a booked interval
    for t in sorted({earliest, *(e for _, e in booked if e >= earliest)}):
        if _fits(booked, t, d):
            return t
    raise AssertionError("unreachable: after the last interval everything fits")


@settings(max_examples=300)
@given(_ops)
def test_place_is_the_first_fit_and_never_overlaps(ops):
    ch = OpChannel()
    booked = []
    for earliest, d in ops:
        want = _reference(booked, earliest, d)
        got = ch.place(earliest, d)
        assert got == want and got >= earliest
        booked.append((got, got + d))
        assert list(ch.intervals) == sorted(booked)
    # rule 4 as the checker reads it: sorted by start, each begins after the previous ends
    iv = sorted(booked)
    for (s0, e0), (s1, e1) in zip(iv, iv[1:]):
        assert s1 >= e0


@settings(max_examples=100)
@given(_ops, _time)
def test_copy_is_independent_and_forget_keeps_later_placements(ops, cut):
    ch = OpChannel()
    for earliest, d in ops:
        ch.place(earliest, d)
    before = ch.intervals
    twin = ch.copy()
    twin.place(0.0, 1.0)
    assert ch.intervals == before
    pruned = ch.copy()
    pruned.forget_until(cut)
    assert all(e > cut for _, e in pruned.intervals)
    for earliest, d in [(cut, 0.5), (cut + 1.0, 2.0), (cut, 0.0)]:
        assert pruned.first_fit(earliest, d) == ch.first_fit(earliest, d)


def test_examples():
    ch = OpChannel([(1.0, 2.0), (3.0, 4.0)])
    assert ch.first_fit(0.0, 1.0) == 0.0       # ends exactly when the next begins
    assert ch.first_fit(0.5, 1.0) == 2.0
    assert ch.first_fit(1.5, 0.0) == 2.0       # a zero-length op is not put inside an interval
    assert ch.first_fit(2.0, 0.0) == 2.0
    assert ch.first_fit(2.0, 1.5) == 4.0
    assert ch.place(2.0, 1.0) == 2.0 and len(ch) == 3
    assert ch.book(10.0, 0.5) == 10.5
    assert repr(ch).startswith("OpChannel([(1.0, 2.0)")

