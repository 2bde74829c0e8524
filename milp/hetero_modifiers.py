"""State-space modifiers for the exact single-machine method (successive sublimation).

Tanaka, Fujikuma & Araki (J. Scheduling 2009), Sec. 5: the Lagrangian
relaxation on :class:`bounds.hetero_ti.Network` made exact job by job.
Modifier jobs are tracked in the labels of forward and backward passes, so
that the relaxation schedules them exactly once; each pass is pruned by the
other direction's labels and removes the arcs no surviving label used. Used
only by :mod:`milp.hetero_ssdp`.

Examples
--------
>>> from bounds.hetero_ti import Network, tardiness_costs
>>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
>>> search = ModifierSearch(Network(p, tardiness_costs(p, w, d)), np.zeros(3), 12.5)
>>> search.add(range(3)); result = search.forward()
>>> result.value, [j for j, _ in result.path]
(12.0, [0, 2, 1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bounds.hetero_ti import INF, Network

__all__ = ["ModifierSearch", "ModifierPass", "Labels", "MAX_MODIFIERS"]

_BIG = np.iinfo(np.int64).max


#: Bits of the modifier set in a label key; at most this many modifier jobs.
MAX_MODIFIERS = 44


@dataclass
class Labels:
    """The labels one modifier pass created, sorted by key ``(t n + j) << 44 | S``.

    ``v1``/``j1``: best value and its neighbouring job (predecessor for a
    forward pass, successor for a backward pass); ``v2``: best value with
    another neighbour. ``nmod``: how many modifier jobs (a prefix of the
    search's list) the pass tracked.
    """

    key: np.ndarray
    v1: np.ndarray
    j1: np.ndarray
    v2: np.ndarray
    nmod: int

    def lookup(self, keys: np.ndarray, neighbour: np.ndarray) -> np.ndarray:
        """Value of the label with each key whose neighbour differs from
        ``neighbour`` (2-cycle rule); ``inf`` where there is none."""
        if len(self.key) == 0:
            return np.full(len(keys), INF)
        i = np.minimum(np.searchsorted(self.key, keys), len(self.key) - 1)
        hit = self.key[i] == keys
        val = np.where(self.j1[i] == neighbour, self.v2[i], self.v1[i])
        return np.where(hit, val, INF)


@dataclass
class ModifierPass:
    """Outcome of one modifier pass: ``value`` the cheapest relaxed path that
    survived (``inf``: none, i.e. no schedule costs ``<= threshold``),
    ``bound`` = value + sum(mu), its ``path``, ``labels`` created, and
    ``aborted`` when the label limit stopped the pass (nothing is known then)."""

    value: float
    bound: float
    path: list
    labels: int
    aborted: bool


class _Pool:
    """Growable label arrays."""

    FIELDS = (("S", np.int64, 0), ("v1", float, INF), ("v2", float, INF), ("j1", np.int64, -3),
              ("ptr1", np.int64, -1), ("ptr2", np.int64, -1), ("node", np.int64, -1))

    def __init__(self, cap: int = 1 << 15):
        self.cap, self.size = cap, 0
        for name, dt, fill in self.FIELDS:
            setattr(self, name, np.full(cap, fill, dtype=dt))

    def reserve(self, extra: int, limit: int) -> bool:
        if self.size + extra <= self.cap:
            return True
        cap = self.cap
        while self.size + extra > cap:
            cap *= 2
        if cap > limit:
            return False
        for name, dt, fill in self.FIELDS:
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.full(cap - self.cap, fill, dtype=dt)]))
        self.cap = cap
        return True

    def append_groups(self, node: np.ndarray, S: np.ndarray, val: np.ndarray, job: np.ndarray, lab: np.ndarray,
                      lo_of: np.ndarray, hi_of: np.ndarray, limit: int) -> bool:
        """Group candidate labels by ``(node, S)`` (:func:`_group`), append each group's best and
        second best (other neighbour job) as one label, and record every node's label range in
        ``lo_of``/``hi_of``; ``False`` when the pool would outgrow ``limit``."""
        order, gs, pos2 = _group(node, S, val, job)
        node, S, val, job, lab = node[order], S[order], val[order], job[order], lab[order]
        G = len(gs)
        if not self.reserve(G, limit):
            return False
        sl = slice(self.size, self.size + G)
        has2 = pos2 >= 0
        p2 = np.where(has2, pos2, 0)
        self.S[sl] = S[gs]
        self.v1[sl] = val[gs]
        self.j1[sl] = job[gs]
        self.ptr1[sl] = lab[gs]
        self.v2[sl] = np.where(has2, val[p2], INF)
        self.ptr2[sl] = np.where(has2, lab[p2], -1)
        self.node[sl] = node[gs]
        nodes, first = np.unique(node[gs], return_index=True)
        lo_of[nodes] = self.size + first
        hi_of[nodes] = self.size + np.append(first[1:], G)
        self.size += G
        return True


def _group(keys_a: np.ndarray, keys_b: np.ndarray, val: np.ndarray, nb: np.ndarray):
    """Group candidates by ``(keys_a, keys_b)``; per group the best candidate
    and the best one whose neighbour job ``nb`` differs from the best's.
    Returns (order, group starts, position of the second best or -1)."""
    order = np.lexsort((val, keys_b, keys_a))
    a, b, nbs = keys_a[order], keys_b[order], nb[order]
    newg = np.ones(len(a), dtype=bool)
    newg[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    gstart = np.flatnonzero(newg)
    gid = np.cumsum(newg) - 1
    other = nbs != nbs[gstart][gid]
    pos2 = np.minimum.reduceat(np.where(other, np.arange(len(a)), _BIG), gstart)
    return order, gstart, np.where(pos2 == _BIG, -1, pos2)


class ModifierSearch:
    """Successive sublimation: forward and backward passes of the relaxation
    with state-space modifiers, each pruned by the labels of the last pass in
    the other direction (Tanaka, Fujikuma & Araki 2009, Sec. 5).

    A label ``(node, S)`` records which modifier jobs ``S`` a partial path has
    done (forward: up to and including the node; backward: strictly after
    it); modifier jobs occur at most once, and all of them on a full path,
    so with every job a modifier the relaxation is the problem itself. A
    label is dropped when its value plus the best compatible label of the
    other direction (or the modifier-free bound) exceeds the threshold; arcs
    that carried no surviving label are removed from the network.

    Parameters
    ----------
    net
        The (already reduced) network; it is reduced further in place.
    mu
        Multipliers (kept fixed).
    threshold
        Only schedules of cost ``<= threshold`` (true units, ``sum(mu)``
        included) are of interest.
    """

    def __init__(self, net: Network, mu: np.ndarray, threshold: float):
        self.net = net
        self.mu = np.asarray(mu, dtype=float)
        self.shift = float(np.sum(self.mu))
        self.limit = threshold - self.shift
        self.modifiers: list[int] = []
        self.fl: Labels | None = None
        self.bl: Labels | None = None

    def add(self, jobs) -> None:
        """Append modifier jobs (bits are positions in the list, so old labels stay meaningful)."""
        for j in jobs:
            j = int(j)
            if j not in self.modifiers:
                if len(self.modifiers) >= MAX_MODIFIERS:
                    raise ValueError(f"at most {MAX_MODIFIERS} modifier jobs")
                self.modifiers.append(j)

    def _bits(self) -> tuple[np.ndarray, int]:
        bit = np.zeros(self.net.n, dtype=np.int64)
        for b, j in enumerate(self.modifiers):
            bit[j] = np.int64(1) << b
        return bit, len(self.modifiers)

    def _key(self, t: np.ndarray, k: np.ndarray, S: np.ndarray) -> np.ndarray:
        return ((t * self.net.n + k) << MAX_MODIFIERS) | S

    # ------------------------------------------------------------------ forward
    def forward(self, max_labels: int = 3_000_000, deadline: float | None = None) -> ModifierPass:
        """One forward pass with the current modifier jobs (``aborted`` past
        ``max_labels`` labels or the ``time.perf_counter`` value ``deadline``)."""
        import time

        net, N, T = self.net, self.net.N, self.net.T
        bit, m = self._bits()
        full = np.int64((1 << m) - 1)
        c = net.node_costs(self.mu)
        node_k, node_t = net.node_k, net.node_t
        if self.bl is None:
            bw = net.backward(self.mu)
        pool = _Pool()
        pool.size = 1
        pool.v1[0] = 0.0
        pool.j1[0] = -1
        pool.node[0] = N
        lo_of = np.zeros(N + 1, dtype=np.int64)
        hi_of = np.zeros(N + 1, dtype=np.int64)
        hi_of[N] = 1
        used = np.zeros(len(net.arc_src), dtype=bool)
        tp, ptr = net.time_ptr, net.in_ptr
        for t in range(1, T + 1):
            v0, v1 = tp[t], tp[t + 1]
            if v0 == v1:
                continue
            if deadline is not None and t % 64 == 0 and time.perf_counter() > deadline:
                return ModifierPass(INF, -INF, [], pool.size, True)
            a0, a1 = ptr[v0], ptr[v1]
            src = net.arc_src[a0:a1]
            cnt = hi_of[src] - lo_of[src]
            total = int(cnt.sum())
            if total == 0:
                continue
            arc = np.repeat(np.arange(a0, a1), cnt)
            lab = np.repeat(lo_of[src], cnt) + (np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt))
            k = net.arc_tgtjob[arc]
            v = net.arc_tgt[arc]
            uj = net.arc_srcjob[arc]
            S = pool.S[lab]
            bk = bit[k]
            val = np.where(pool.j1[lab] == k, pool.v2[lab], pool.v1[lab]) + c[v]
            S2 = S | bk
            if self.bl is not None:
                mb = self.bl.nmod
                R = ~S2 & np.int64((1 << mb) - 1)
                rest = self.bl.lookup(self._key(node_t[v], node_k[v], R), uj)
            else:
                rest = np.where(bw.s1[v] == uj, bw.b2[v], bw.b1[v])
            ok = ((S & bk) == 0) & (val + rest <= self.limit)
            if not ok.any():
                continue
            used[arc[ok]] = True
            if not pool.append_groups(v[ok], S2[ok], val[ok], uj[ok], lab[ok], lo_of, hi_of, max_labels):
                return ModifierPass(INF, -INF, [], pool.size, True)
        size = pool.size
        keys = self._key(node_t[pool.node[1:size]], node_k[pool.node[1:size]], pool.S[1:size])
        order = np.argsort(keys, kind="stable")
        self.fl = Labels(keys[order], pool.v1[1:size][order], pool.j1[1:size][order],
                         pool.v2[1:size][order], m)
        # best full path
        ends = np.arange(1, size)[(node_t[pool.node[1:size]] == T) & (pool.S[1:size] == full)]
        result = self._finish(pool, ends, node_k, node_t, forward=True)
        if not used.all():
            net.set_arcs(net.arc_src[used], net.arc_tgt[used])
        return result

    # ------------------------------------------------------------------ backward
    def backward(self, max_labels: int = 3_000_000, deadline: float | None = None) -> ModifierPass:
        """One backward pass (see :meth:`forward`)."""
        import time

        net, N, T = self.net, self.net.N, self.net.T
        bit, m = self._bits()
        full = np.int64((1 << m) - 1)
        c = net.node_costs(self.mu)
        node_k, node_t = net.node_k, net.node_t
        if self.fl is None:
            fw = net.forward(self.mu)
        pool = _Pool()
        tp = net.time_ptr
        lo_of = np.zeros(N + 1, dtype=np.int64)
        hi_of = np.zeros(N + 1, dtype=np.int64)
        endn = np.arange(tp[T], tp[T + 1])
        E = len(endn)
        pool.reserve(E, max_labels + E)
        pool.size = E
        pool.v1[:E] = 0.0
        pool.j1[:E] = -2
        pool.node[:E] = endn
        lo_of[endn] = np.arange(E)
        hi_of[endn] = np.arange(1, E + 1)
        used = np.zeros(len(net.arc_src), dtype=bool)
        order_src, optr = net.by_src, net.out_ptr
        jobx = np.append(node_k, -1)
        timex = np.append(node_t, 0)
        for t in list(range(T - 1, 0, -1)) + [0]:
            if t > 0:
                u0, u1 = tp[t], tp[t + 1]
            else:
                u0, u1 = N, N + 1
            if u0 == u1:
                continue
            if deadline is not None and t % 64 == 0 and time.perf_counter() > deadline:
                return ModifierPass(INF, -INF, [], pool.size, True)
            arcs = order_src[optr[u0]:optr[u1]]
            if len(arcs) == 0:
                continue
            v = net.arc_tgt[arcs]
            cnt = hi_of[v] - lo_of[v]
            total = int(cnt.sum())
            if total == 0:
                continue
            arc = np.repeat(arcs, cnt)
            lab = np.repeat(lo_of[v], cnt) + (np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt))
            v = net.arc_tgt[arc]
            u = net.arc_src[arc]
            vj = net.arc_tgtjob[arc]
            uj = net.arc_srcjob[arc]
            R = pool.S[lab]
            bk = bit[vj]
            val = c[v] + np.where(pool.j1[lab] == uj, pool.v2[lab], pool.v1[lab])
            R2 = R | bk
            if t == 0:
                before = np.zeros(len(u))
            elif self.fl is not None:
                mf = self.fl.nmod
                S = ~R2 & np.int64((1 << mf) - 1)
                before = self.fl.lookup(self._key(timex[u], jobx[u], S), vj)
            else:
                before = np.where(fw.p1[u] == vj, fw.f2[u], fw.f1[u])
            ok = ((R & bk) == 0) & (val + before <= self.limit)
            if t == 0:
                ok &= R2 == full
            if not ok.any():
                continue
            used[arc[ok]] = True
            if not pool.append_groups(u[ok], R2[ok], val[ok], vj[ok], lab[ok], lo_of, hi_of, max_labels):
                return ModifierPass(INF, -INF, [], pool.size, True)
        size = pool.size
        real = np.flatnonzero(pool.node[:size] != N)
        keys = self._key(timex[pool.node[real]], jobx[pool.node[real]], pool.S[real])
        order = np.argsort(keys, kind="stable")
        self.bl = Labels(keys[order], pool.v1[real][order], pool.j1[real][order], pool.v2[real][order], m)
        starts = np.flatnonzero(pool.node[:size] == N)
        result = self._finish(pool, starts, node_k, node_t, forward=False)
        if not used.all():
            net.set_arcs(net.arc_src[used], net.arc_tgt[used])
        return result

    def _finish(self, pool: _Pool, ends: np.ndarray, node_k, node_t, forward: bool) -> ModifierPass:
        N = len(node_k)
        if len(ends) == 0:
            return ModifierPass(INF, INF, [], pool.size, False)
        best = int(ends[np.argmin(pool.v1[ends])])
        value = float(pool.v1[best])
        path = []
        lab, which = best, 1
        if forward:
            while pool.node[lab] != N:
                node = int(pool.node[lab])
                job = int(node_k[node])
                path.append((job, int(node_t[node])))
                prev = int(pool.ptr1[lab] if which == 1 else pool.ptr2[lab])
                which = 1 if pool.j1[prev] != job else 2
                lab = prev
            path.reverse()
        else:
            ujob = -1
            while pool.ptr1[lab] >= 0:
                nxt = int(pool.ptr1[lab] if which == 1 else pool.ptr2[lab])
                node = int(pool.node[nxt])
                path.append((int(node_k[node]), int(node_t[node])))
                which = 1 if pool.j1[nxt] != ujob else 2
                ujob = int(node_k[node])
                lab = nxt
        return ModifierPass(value, value + self.shift, path, pool.size, False)
