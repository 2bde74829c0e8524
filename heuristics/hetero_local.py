"""Compiled local search on per-GPU sequences (several GPUs and/or arrival times).

The search behind :func:`heuristics.hetero.ils` when the instance is not the
single-machine case. A solution is one sequence per GPU, scheduled
semi-actively (``C = max(a_i, C_prev) + p_ij``, heterogeneous-GPU scheduling
paper, eqs. 4-6); the objective is the total weighted tardiness (eq. 1).

Neighbourhoods (all evaluated exactly, arrivals included):

- *relocate*: a task moves to any position of any GPU it fits (eq. 3),
  its own GPU included (the insert move of one machine);
- *swap*: two tasks exchange their places, on one GPU or across two GPUs
  (each must fit the other's GPU).

A move changes only the suffixes of one or two sequences from the first
changed position on. Per GPU the completion times and prefix costs are kept,
so a move costs the prefix cost plus a walk along the changed suffix, which
stops as soon as a completion time equals the old one (an idle gap before an
arrival absorbed the shift: the rest of the sequence is unchanged) or the
partial cost already exceeds what an improving move may cost. The descent
visits the tasks in turn and applies the best relocation or swap of each
task (best improvement per task, first improvement over tasks) until a full
pass finds nothing.

The iterated local search (Lourenco, Martin & Stuetzle, "Iterated local
search", Handbook of Metaheuristics 2003, Sec. 3) kicks the current local
optimum by a few random relocations and swaps of tasks to positions that run
at about the same time on another (or the same) GPU, descends again, accepts
a result no worse than the current one, and goes back to the best after
``restart`` kicks without a new best. The kernels are compiled by numba
(``cache=True``) and use their own xorshift generator, so a run is
deterministic for a seed and a number of kicks whatever the chunking of the
calls.

Examples
--------
>>> from instances import hetero
>>> from heuristics.hetero import greedy, objective
>>> pb = hetero.generate(30, seed=3)
>>> start = greedy(pb).sequences(pb)
>>> objective(pb, local_search(pb, start)) <= objective(pb, start)
True
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from numba import njit

from instances.hetero import HeteroProblem
from instances import options as opt
from instances.options import known_options

__all__ = ["local_search", "iterated_local_search", "move_cost"]

#: After a kick or an applied move, the tasks within this many positions of
#: its ends are searched again (the others keep their don't-look bit).
RADIUS = 3
#: Whether the descent after a kick ends with a pass over every task (a
#: true local optimum; slower, and no better within a time limit).
FULL = False

_U12, _U25, _U27 = np.uint64(12), np.uint64(25), np.uint64(27)
_MULT = np.uint64(2685821657736338717)
_U11 = np.uint64(11)


@njit(cache=True)
def _rand(state):
    """Next 64-bit draw of the xorshift64* generator in ``state[0]``."""
    x = state[0]
    x ^= x >> _U12
    x ^= x << _U25
    x ^= x >> _U27
    state[0] = x
    return x * _MULT


@njit(cache=True)
def _randint(state, k):
    """Uniform integer in ``0..k-1`` (``k >= 1``)."""
    return np.int64(_rand(state) >> _U11) % k


@njit(cache=True)
def _rebuild(g, seq, ln, C, pre, p, a, d, w, gpu_of, pos_of):
    """Completion times and prefix costs of GPU ``g`` from scratch."""
    t = 0.0
    acc = 0.0
    pre[g, 0] = 0.0
    for k in range(ln[g]):
        u = seq[g, k]
        s = a[u] if a[u] > t else t
        t = s + p[u, g]
        C[g, k] = t
        if t > d[u]:
            acc += w[u] * (t - d[u])
        pre[g, k + 1] = acc
        gpu_of[u] = g
        pos_of[u] = k


@njit(cache=True)
def _tail(g, k, t, acc, limit, seq, ln, C, pre, p, a, d, w):
    """Cost of GPU ``g`` whose positions before the old position ``k`` cost
    ``acc`` and end at ``t``, followed by the old positions ``k..``.

    Stops when a completion time equals the old one (the rest is unchanged)
    or when the cost reaches ``limit`` (then any value >= ``limit``)."""
    total = pre[g, ln[g]]
    # a tail that starts no earlier than before only gets later (semi-active
    # schedules are monotone in the start), so it costs at least the old tail
    late = t >= (C[g, k - 1] if k > 0 else 0.0)
    if late and acc + total - pre[g, k] >= limit:
        return acc + total - pre[g, k]
    for q in range(k, ln[g]):
        u = seq[g, q]
        s = a[u] if a[u] > t else t
        t = s + p[u, g]
        if t == C[g, q]:
            return acc + total - pre[g, q]
        if t > d[u]:
            acc += w[u] * (t - d[u])
            if acc >= limit:
                return acc
            if late and acc + total - pre[g, q + 1] >= limit:
                return acc + total - pre[g, q + 1]
    return acc


@njit(cache=True)
def _cost_remove(g, i, seq, ln, C, pre, p, a, d, w):
    """Cost of GPU ``g`` without its task at position ``i``."""
    t = C[g, i - 1] if i > 0 else 0.0
    return _tail(g, i + 1, t, pre[g, i], np.inf, seq, ln, C, pre, p, a, d, w)


@njit(cache=True)
def _cost_put(h, j, u, skip, limit, seq, ln, C, pre, p, a, d, w):
    """Cost of GPU ``h`` with task ``u`` put at position ``j``: inserted before
    the old position ``j`` (``skip=0``) or replacing it (``skip=1``)."""
    acc = pre[h, j]
    if acc >= limit:
        return acc
    t = C[h, j - 1] if j > 0 else 0.0
    t = (a[u] if a[u] > t else t) + p[u, h]
    if t > d[u]:
        acc += w[u] * (t - d[u])
    if acc >= limit:
        return acc
    return _tail(h, j + skip, t, acc, limit, seq, ln, C, pre, p, a, d, w)


@njit(cache=True)
def _cost_intra(g, i, j, swap, limit, seq, ln, C, pre, p, a, d, w):
    """Cost of GPU ``g`` after moving its position ``i`` to position ``j``
    (``swap=0``, positions in the new sequence) or exchanging positions
    ``i`` and ``j`` (``swap=1``)."""
    lo = i if i < j else j
    hi = j if i < j else i
    acc = pre[g, lo]
    if acc >= limit:
        return acc
    t = C[g, lo - 1] if lo > 0 else 0.0
    for q in range(lo, hi + 1):
        if swap == 1:
            src = j if q == i else (i if q == j else q)
        elif i < j:
            src = q + 1 if q < j else i
        else:
            src = i if q == j else q - 1
        u = seq[g, src]
        s = a[u] if a[u] > t else t
        t = s + p[u, g]
        if t > d[u]:
            acc += w[u] * (t - d[u])
            if acc >= limit:
                return acc
    return _tail(g, hi + 1, t, acc, limit, seq, ln, C, pre, p, a, d, w)


@njit(cache=True)
def _insert(h, j, u, seq, ln):
    for q in range(ln[h], j, -1):
        seq[h, q] = seq[h, q - 1]
    seq[h, j] = u
    ln[h] += 1


@njit(cache=True)
def _delete(g, i, seq, ln):
    for q in range(i, ln[g] - 1):
        seq[g, q] = seq[g, q + 1]
    ln[g] -= 1


@njit(cache=True)
def _total(ln, pre):
    s = 0.0
    for g in range(ln.shape[0]):
        s += pre[g, ln[g]]
    return s


@njit(cache=True)
def _mark(g, pos, radius, seq, ln, dirty):
    """Mark the tasks of GPU ``g`` within ``radius`` positions of ``pos``;
    returns how many were clean."""
    added = 0
    for q in range(max(0, pos - radius), min(ln[g], pos + radius + 1)):
        u = seq[g, q]
        if not dirty[u]:
            dirty[u] = True
            added += 1
    return added


@njit(cache=True)
def _descent(seq, ln, C, pre, gpu_of, pos_of, p, a, d, w, elig, tasks, state, max_moves, dirty, radius, full):
    """Best relocation or swap of each marked task in turn (``dirty``),
    applied when improving; an applied move marks the tasks within
    ``radius`` positions of its two ends (don't-look bits, Bentley 1992).
    With ``full``, an empty queue after a move starts a pass over all tasks,
    so the result is a local optimum of the whole neighbourhood (returns
    True); returns False after ``max_moves`` moves."""
    m = seq.shape[0]
    nt = tasks.shape[0]
    if nt == 0:
        return True
    ndirty = 0
    for x in range(nt):
        if dirty[tasks[x]]:
            ndirty += 1
    k = _randint(state, nt)
    moves = 0
    moved = False
    # flags and markers typed int64, not literals: each literal value would compile its own copy of the callee
    none, relocate, swap = np.int64(-1), np.int64(0), np.int64(1)
    while True:
        if ndirty == 0:
            if not (full and moved):
                return True
            for x in range(nt):
                dirty[tasks[x]] = True
            ndirty = nt
            moved = False
        if moves >= max_moves:
            return False
        t = tasks[k % nt]
        k += 1
        if not dirty[t]:
            continue
        dirty[t] = False
        ndirty -= 1
        g = gpu_of[t]
        i = pos_of[t]
        cg = pre[g, ln[g]]
        eps = 1e-9 * max(1.0, _total(ln, pre))
        best = -eps
        kind = -1  # 0 relocate, 1 swap
        bh = none
        bj = none
        dg = _cost_remove(g, i, seq, ln, C, pre, p, a, d, w) - cg
        for h in range(m):
            if not elig[t, h]:
                continue
            if h == g:
                for j in range(ln[g]):
                    if j == i:
                        continue
                    # compared with the limit itself: a pruned value is >= the limit,
                    # while c - cg may round below best
                    lim = cg + best
                    c = _cost_intra(g, i, j, relocate, lim, seq, ln, C, pre, p, a, d, w)
                    if c < lim:
                        best, kind, bh, bj = c - cg, 0, h, j
                    if j != i - 1 and j != i + 1:
                        lim = cg + best
                        c = _cost_intra(g, i, j, swap, lim, seq, ln, C, pre, p, a, d, w)
                        if c < lim:
                            best, kind, bh, bj = c - cg, 1, h, j
            else:
                ch = pre[h, ln[h]]
                for j in range(ln[h] + 1):
                    # t's own tardiness only grows with j and the rest of h only gets later
                    ct = (C[h, j - 1] if j > 0 else 0.0)
                    ct = (a[t] if a[t] > ct else ct) + p[t, h]
                    if ct > d[t] and dg + w[t] * (ct - d[t]) >= best:
                        break
                    lim = ch + best - dg
                    c = _cost_put(h, j, t, relocate, lim, seq, ln, C, pre, p, a, d, w)
                    if c < lim:
                        best, kind, bh, bj = dg + c - ch, 0, h, j
                for j in range(ln[h]):
                    u = seq[h, j]
                    if not elig[u, g]:
                        continue
                    lim = cg + ch + best - pre[h, j]
                    c1 = _cost_put(g, i, u, swap, lim, seq, ln, C, pre, p, a, d, w)
                    if c1 >= lim:
                        continue
                    lim = ch + cg + best - c1
                    c2 = _cost_put(h, j, t, swap, lim, seq, ln, C, pre, p, a, d, w)
                    if c2 < lim:
                        best, kind, bh, bj = c1 - cg + c2 - ch, 1, h, j
        if kind < 0:
            continue
        if kind == 1:
            u = seq[bh, bj]
            seq[bh, bj] = t
            seq[g, i] = u
        else:
            _delete(g, i, seq, ln)
            _insert(bh, bj, t, seq, ln)
        _rebuild(g, seq, ln, C, pre, p, a, d, w, gpu_of, pos_of)
        if bh != g:
            _rebuild(bh, seq, ln, C, pre, p, a, d, w, gpu_of, pos_of)
        moves += 1
        moved = True
        ndirty += _mark(g, min(i, ln[g] - 1), radius, seq, ln, dirty)
        ndirty += _mark(bh, pos_of[t], radius, seq, ln, dirty)


@njit(cache=True)
def _kick(seq, ln, C, pre, gpu_of, pos_of, p, a, d, w, elig, tasks, state, kmin, kmax, dirty, radius):
    """``kmin..kmax`` random relocations or swaps, each of a random task to a
    position of a random eligible GPU that runs at about the task's start."""
    m = seq.shape[0]
    nt = tasks.shape[0]
    K = kmin + _randint(state, kmax - kmin + 1)
    five, two = np.int64(5), np.int64(2)  # typed, not literals (one compiled _randint)
    for _ in range(K):
        t = tasks[_randint(state, nt)]
        g = gpu_of[t]
        i = pos_of[t]
        ne = 0
        for h in range(m):
            if elig[t, h]:
                ne += 1
        r = _randint(state, ne)
        h = 0
        for hh in range(m):
            if elig[t, hh]:
                if r == 0:
                    h = hh
                    break
                r -= 1
        start = C[g, i] - p[t, g]
        j = 0
        while j < ln[h] and C[h, j] <= start:
            j += 1
        j += _randint(state, five) - 2
        if _randint(state, two) == 0 and ln[h] > 0:
            j = min(max(j, 0), ln[h] - 1)
            u = seq[h, j]
            if u != t and elig[u, g]:
                seq[h, j] = t
                seq[g, i] = u
                _rebuild(g, seq, ln, C, pre, p, a, d, w, gpu_of, pos_of)
                if h != g:
                    _rebuild(h, seq, ln, C, pre, p, a, d, w, gpu_of, pos_of)
                _mark(g, i, radius, seq, ln, dirty)
                _mark(h, j, radius, seq, ln, dirty)
                continue
        _delete(g, i, seq, ln)
        j = min(max(j, 0), ln[h])
        _insert(h, j, t, seq, ln)
        _rebuild(g, seq, ln, C, pre, p, a, d, w, gpu_of, pos_of)
        if h != g:
            _rebuild(h, seq, ln, C, pre, p, a, d, w, gpu_of, pos_of)
        _mark(g, min(i, ln[g] - 1), radius, seq, ln, dirty)
        _mark(h, j, radius, seq, ln, dirty)


@njit(cache=True)
def _ils(cur_seq, cur_ln, best_seq, best_ln, costs, counters, p, a, d, w, elig, tasks, state,
         iters, kmin, kmax, restart, radius, full):
    """``iters`` kicks of the iterated local search; ``costs`` holds (current,
    best) and ``counters`` (kicks since the last new best,) between calls."""
    m, cap = cur_seq.shape
    n = p.shape[0]
    seq = np.empty((m, cap), dtype=np.int64)
    ln = np.empty(m, dtype=np.int64)
    C = np.zeros((m, cap))
    pre = np.zeros((m, cap + 1))
    gpu_of = np.zeros(n, dtype=np.int64)
    pos_of = np.zeros(n, dtype=np.int64)
    dirty = np.zeros(n, dtype=np.bool_)
    # typed int64, not a literal: a literal argument would compile a second copy of the descent
    unbounded = np.int64(1 << 40)
    done = 0
    for _ in range(iters):
        if costs[1] <= 0.0:
            break
        done += 1
        seq[:, :] = cur_seq
        ln[:] = cur_ln
        for g in range(m):
            _rebuild(g, seq, ln, C, pre, p, a, d, w, gpu_of, pos_of)
        dirty[:] = False
        _kick(seq, ln, C, pre, gpu_of, pos_of, p, a, d, w, elig, tasks, state, kmin, kmax, dirty, radius)
        _descent(seq, ln, C, pre, gpu_of, pos_of, p, a, d, w, elig, tasks, state, unbounded, dirty, radius, full)
        c = _total(ln, pre)
        if c <= costs[0] + 1e-9 * max(1.0, costs[0]):
            cur_seq[:, :] = seq
            cur_ln[:] = ln
            costs[0] = c
        if c < costs[1] - 1e-9 * max(1.0, costs[1]):
            best_seq[:, :] = seq
            best_ln[:] = ln
            costs[1] = c
            counters[0] = 0
        else:
            counters[0] += 1
            if counters[0] >= restart:
                cur_seq[:, :] = best_seq
                cur_ln[:] = best_ln
                costs[0] = costs[1]
                counters[0] = 0
    return done


class _State:
    """Per-GPU sequences as the kernels' arrays."""

    def __init__(self, problem: HeteroProblem, seqs: Sequence[Sequence[int]]):
        self.problem = problem
        n, m = problem.n, problem.m
        self.p = np.ascontiguousarray(problem.p, dtype=np.float64)
        self.a = np.ascontiguousarray(problem.arrival, dtype=np.float64)
        self.d = np.ascontiguousarray(problem.deadline, dtype=np.float64)
        self.w = np.ascontiguousarray(problem.weight, dtype=np.float64)
        self.elig = np.ascontiguousarray(problem.eligible, dtype=np.bool_)
        self.tasks = np.array([i for s in seqs for i in s], dtype=np.int64)
        self.seq = np.zeros((m, max(1, n)), dtype=np.int64)
        self.ln = np.zeros(m, dtype=np.int64)
        for g, s in enumerate(seqs):
            self.seq[g, :len(s)] = s
            self.ln[g] = len(s)
        self.C = np.zeros((m, max(1, n)))
        self.pre = np.zeros((m, max(1, n) + 1))
        self.gpu_of = np.zeros(n, dtype=np.int64)
        self.pos_of = np.zeros(n, dtype=np.int64)
        self.dirty = np.zeros(n, dtype=np.bool_)
        self.dirty[self.tasks] = True
        self.rebuild()

    def args(self):
        return self.p, self.a, self.d, self.w

    def rebuild(self):
        for g in range(self.problem.m):
            _rebuild(g, self.seq, self.ln, self.C, self.pre, *self.args(), self.gpu_of, self.pos_of)

    def cost(self) -> float:
        return float(_total(self.ln, self.pre))

    def sequences(self, seq=None, ln=None) -> list[list[int]]:
        seq = self.seq if seq is None else seq
        ln = self.ln if ln is None else ln
        return [[int(x) for x in seq[g, :ln[g]]] for g in range(self.problem.m)]

    def descend(self, state, deadline: float | None, moves: int = 16) -> bool:
        """Descent to a local optimum, in calls of at most ``moves`` moves so
        that ``deadline`` (a ``time.perf_counter`` value) is checked; True when
        a local optimum was reached."""
        while True:
            done = _descent(self.seq, self.ln, self.C, self.pre, self.gpu_of, self.pos_of, *self.args(),
                            self.elig, self.tasks, state, moves if deadline is not None else 1 << 40,
                            self.dirty, 1, True)
            if done:
                return True
            if deadline is not None and time.perf_counter() >= deadline:
                return False
            # the moves of this call are checked by the next one's full pass
            self.dirty[self.tasks] = True


def _seed_state(seed: int | None) -> np.ndarray:
    # splitmix64 of the seed: a nonzero xorshift state, different seeds far apart;
    # None draws one from the operating system, as numpy's default_rng(None) does
    if seed is None:
        seed = int(np.random.SeedSequence().entropy) & 0xFFFFFFFF
    z = (int(seed) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return np.array([z or 1], dtype=np.uint64)


def _check_sequences(problem: HeteroProblem, seqs: Sequence[Sequence[int]]) -> None:
    seen = [i for s in seqs for i in s]
    if len(seqs) != problem.m or len(set(seen)) != len(seen):
        raise ValueError("need one sequence per GPU, each task at most once")
    for g, s in enumerate(seqs):
        for i in s:
            if not problem.eligible[i, g]:
                raise ValueError(f"task {i} does not fit GPU {g}")


@known_options
def local_search(problem: HeteroProblem, sequences: Sequence[Sequence[int]], *, seed: int = 0) -> list[list[int]]:
    """Descent from per-GPU ``sequences`` (task indices) to a local optimum of
    the relocate and swap neighbourhoods (see the module docstring); never
    worse than the start. ``seed`` picks the task the first pass starts at."""
    seed = opt.seed(seed)
    _check_sequences(problem, sequences)
    st = _State(problem, sequences)
    st.descend(_seed_state(seed), None)
    return st.sequences()


@known_options
def move_cost(problem: HeteroProblem, sequences: Sequence[Sequence[int]], move: tuple) -> float:
    """Total weighted tardiness after one move, by the kernels' incremental
    evaluation (for checking them against a plain evaluation).

    ``move`` is ``("relocate", g, i, h, j)`` (position ``i`` of GPU ``g`` to
    position ``j`` of GPU ``h``; for ``h == g``, ``j`` is the position in the
    new sequence) or ``("swap", g, i, h, j)``."""
    _check_sequences(problem, sequences)
    st = _State(problem, sequences)
    kind, g, i, h, j = move
    args = (st.seq, st.ln, st.C, st.pre, *st.args())
    other = st.cost() - st.pre[g, st.ln[g]] - (st.pre[h, st.ln[h]] if h != g else 0.0)
    t = int(st.seq[g, i])
    if h == g:
        return other + float(_cost_intra(g, i, j, 1 if kind == "swap" else 0, np.inf, *args))
    if kind == "swap":
        u = int(st.seq[h, j])
        return other + float(_cost_put(g, i, u, 1, np.inf, *args)) + float(_cost_put(h, j, t, 1, np.inf, *args))
    return other + float(_cost_remove(g, i, *args)) + float(_cost_put(h, j, t, 0, np.inf, *args))


@known_options
def iterated_local_search(problem: HeteroProblem, starts: Sequence[Sequence[Sequence[int]]], *,
                          time_limit: float | None = 1.0, max_iter: int | None = None, seed: int = 0,
                          kick: tuple[int, int] = (2, 4), restart: int = 100) -> list[list[int]]:
    """Iterated local search from the best local optimum of ``starts`` (each
    a list of per-GPU sequences), see the module docstring. Stops after
    ``max_iter`` kicks or ``time_limit`` seconds, or at objective 0; with
    ``time_limit=None`` the result depends only on the seed."""
    time_limit, seed = opt.time_limit(time_limit), opt.seed(seed)
    if max_iter is not None:
        opt.integer(max_iter, "max_iter", lo=0)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    state = _seed_state(seed)
    best = None
    for seqs in starts:
        _check_sequences(problem, seqs)
        st = _State(problem, seqs)
        st.descend(state, deadline)
        if best is None or st.cost() < best.cost():
            best = st
        if best.cost() <= 0 or (deadline is not None and time.perf_counter() >= deadline):
            break
    if best is None:
        return [[] for _ in range(problem.m)]
    if len(best.tasks) < 2 or best.cost() <= 0:
        return best.sequences()
    cur_seq, cur_ln = best.seq.copy(), best.ln.copy()
    best_seq, best_ln = best.seq.copy(), best.ln.copy()
    costs = np.array([best.cost(), best.cost()])
    counters = np.zeros(1, dtype=np.int64)
    kmin, kmax = int(kick[0]), int(kick[1])
    it, chunk = 0, 1
    while costs[1] > 0:
        if max_iter is not None and it >= max_iter:
            break
        now = time.perf_counter()
        if deadline is not None and now >= deadline:
            break
        todo = chunk if max_iter is None else min(chunk, max_iter - it)
        done = _ils(cur_seq, cur_ln, best_seq, best_ln, costs, counters, *best.args(), best.elig, best.tasks,
                    state, todo, kmin, kmax, restart, RADIUS, FULL)
        it += done
        if done < todo:
            break
        if deadline is not None:
            # about 20 ms a call, so that the time limit is kept closely
            spent = max(time.perf_counter() - now, 1e-6)
            rate = done / spent
            chunk = max(1, min(4 * chunk, int(rate * min(0.02, max(deadline - time.perf_counter(), 0.0))) or 1))
        else:
            chunk = min(4 * chunk, 256)
    return best.sequences(best_seq, best_ln)
