"""MIG-capable GPU models: slices, placements, repartitioning trees, reconfiguration times.

Implements the FAR paper's Sections 1.2 and 2.1: Figure 1 (valid
partitions), Figure 4 (repartitioning trees) and Table 1 (create / destroy
times). A *placement* is an instance profile at a start slice. It computes on
``size`` slices and *occupies* ``slices`` (the slices no other instance may use
while it exists). On the A100/H100 the 3-slice instance at slice 0 computes on
slices 0-2 but occupies 0-3, since it takes slice 3's memory (Figure 1,
partitions 5-7). With occupancy defined so, "the running instances are part of
a valid partition" is exactly "no two live instances share an occupied slice".

Examples
--------
>>> from instances import gpus
>>> a100 = gpus.get("A100")
>>> len(a100.partitions()), len(gpus.get("A30").partitions())
(19, 5)
>>> p = a100.placement(3, 0)
>>> sorted(p.slices), p.name
([0, 1, 2, 3], '3@0')
>>> [c.name for c in a100.children(a100.root)]
['4@0', '3@4']
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from instances.errors import GPUSpecError, UnknownGPUError
from instances import files

__all__ = ["Placement", "GPUSpec", "get", "names", "register", "from_dict", "load", "BUILTIN",
           "MAX_SLICES", "MAX_PLACEMENTS", "MAX_COMPATIBLE_SETS"]


@dataclass(frozen=True, order=True)
class Placement:
    """A MIG instance profile at a start slice.

    Attributes
    ----------
    size
        Compute size: the number of slices the instance computes with.
    start
        First slice of the instance.
    slices
        Occupied slices (a frozenset): no other live instance may use them.
    """

    size: int
    start: int
    slices: frozenset[int] = field(compare=False)

    @property
    def name(self) -> str:
        """Short name ``size@start``, e.g. ``3@4``."""
        return f"{self.size}@{self.start}"

    @property
    def compute_slices(self) -> range:
        return range(self.start, self.start + self.size)

    def intersects(self, other: "Placement") -> bool:
        """True if the two placements share an occupied slice (cannot be live together)."""
        return not self.slices.isdisjoint(other.slices)

    def key(self) -> tuple[int, int]:
        return (self.size, self.start)

    def to_dict(self) -> dict[str, int]:
        return {"size": self.size, "start": self.start}

    def __repr__(self) -> str:
        return f"Placement({self.name}, slices={sorted(self.slices)})"


def _frozen(mapping: Mapping[int, float]) -> Mapping[int, float]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, eq=False)
class GPUSpec:
    """A MIG-capable GPU.

    Build one with :func:`from_dict` (validated) or take a built-in with
    :func:`get`. Instances are immutable; :meth:`without_reconfiguration`
    returns a copy whose create/destroy times are all zero.

    Attributes
    ----------
    name
        Model name, e.g. ``"A100"``.
    num_slices
        Number of slices S; slices are numbered 0..S-1.
    memory_per_slice_gb
        Memory of one slice (Sec. 1.2: A30 6 GB, A100 5 GB, H100 10 GB).
    placements
        All placements, in the order of a BFS of the repartitioning tree.
    tree
        ``{placement key: tuple of child placement keys}`` (Figure 4); the
        root occupies every slice, a child's slices are a subset of its
        parent's, siblings are disjoint.
    create_time, destroy_time
        Seconds per compute size (Table 1).
    memory_gb
        Memory of an instance per compute size (e.g. A100 3g has 20 GB).
    """

    name: str
    num_slices: int
    memory_per_slice_gb: float
    placements: tuple[Placement, ...]
    tree: Mapping[tuple[int, int], tuple[tuple[int, int], ...]]
    create_time: Mapping[int, float]
    destroy_time: Mapping[int, float]
    memory_gb: Mapping[int, float]

    # -- structure -------------------------------------------------------
    @cached_property
    def sizes(self) -> tuple[int, ...]:
        """Compute sizes C_G in increasing order (A30: 1, 2, 4)."""
        return tuple(sorted({p.size for p in self.placements}))

    @cached_property
    def _by_key(self) -> dict[tuple[int, int], Placement]:
        return {p.key(): p for p in self.placements}

    @cached_property
    def _parent(self) -> dict[tuple[int, int], tuple[int, int] | None]:
        parent: dict[tuple[int, int], tuple[int, int] | None] = {k: None for k in self._by_key}
        for k, kids in self.tree.items():
            for c in kids:
                parent[c] = k
        return parent

    @property
    def root(self) -> Placement:
        """The whole-GPU placement at the root of the repartitioning tree."""
        return self.placements[0]

    def placement(self, size: int, start: int) -> Placement:
        """The placement ``size@start``; :class:`GPUSpecError` if the GPU has none."""
        try:
            return self._by_key[(int(size), int(start))]
        except KeyError:
            raise GPUSpecError(f"{self.name} has no placement {size}@{start}; valid: "
                               f"{', '.join(p.name for p in self.placements)}", field="placement") from None

    def has_placement(self, size: int, start: int) -> bool:
        return (size, start) in self._by_key

    def placements_of_size(self, size: int) -> tuple[Placement, ...]:
        return tuple(p for p in self.placements if p.size == size)

    def children(self, placement: Placement) -> tuple[Placement, ...]:
        """Children of ``placement`` in the repartitioning tree, in Figure 4's order."""
        return tuple(self._by_key[k] for k in self.tree.get(placement.key(), ()))

    def parent(self, placement: Placement) -> Placement | None:
        k = self._parent[placement.key()]
        return None if k is None else self._by_key[k]

    def ancestors(self, placement: Placement) -> tuple[Placement, ...]:
        """Ancestors from the parent up to the root."""
        out = []
        p = self.parent(placement)
        while p is not None:
            out.append(p)
            p = self.parent(p)
        return tuple(out)

    def subtree(self, placement: Placement) -> tuple[Placement, ...]:
        """``placement`` and all its descendants in the repartitioning tree, in preorder.

        Examples
        --------
        >>> [p.name for p in get("A100").subtree(get("A100").placement(3, 4))]
        ['3@4', '2@4', '1@4', '1@5', '1@6']
        """
        return self._subtrees[placement.key()]

    @cached_property
    def _subtrees(self) -> dict[tuple[int, int], tuple[Placement, ...]]:
        out: dict[tuple[int, int], tuple[Placement, ...]] = {}

        def walk(p: Placement) -> tuple[Placement, ...]:
            sub = (p,) + tuple(q for c in self.children(p) for q in walk(c))
            out[p.key()] = sub
            return sub

        walk(self.root)
        return out

    def symmetric_subtrees(self) -> tuple[tuple[tuple[Placement, ...], tuple[Placement, ...]], ...]:
        """Pairs (A, B) of adjacent sibling subtrees that exchanging maps onto each other, outer pairs first.

        A and B are listed in preorder, so ``zip(A, B)`` is the exchange. A
        pair is kept only if swapping A and B placement by placement (every
        other placement fixed) preserves sizes, occupied-slice counts and
        every intersection: it then maps each schedule to one of equal
        makespan, with or without reconfiguration. Exact models use the pairs
        to break symmetry (the derivation is in ``docs/models/mig_cpsat.md``).

        Examples
        --------
        >>> [(a[0].name, b[0].name) for a, b in get("A100").symmetric_subtrees()]
        [('2@0', '2@2'), ('1@4', '1@5'), ('1@0', '1@1'), ('1@2', '1@3')]
        """
        return self._symmetric_subtrees

    @cached_property
    def _symmetric_subtrees(self) -> tuple[tuple[tuple[Placement, ...], tuple[Placement, ...]], ...]:
        def match(a: Placement, b: Placement) -> dict[Placement, Placement] | None:
            ca, cb = self.children(a), self.children(b)
            if a.size != b.size or len(a.slices) != len(b.slices) or len(ca) != len(cb):
                return None
            out = {a: b}
            for x, y in zip(ca, cb):
                sub = match(x, y)
                if sub is None:
                    return None
                out.update(sub)
            return out

        pairs = []
        for parent in self.placements:  # BFS order: outer pairs first
            kids = self.children(parent)
            for x, y in zip(kids, kids[1:]):
                sigma = match(x, y)
                if sigma is None:
                    continue
                perm = {p: p for p in self.placements}
                perm.update(sigma)
                perm.update({v: k for k, v in sigma.items()})
                if all(p.intersects(q) == perm[p].intersects(perm[q]) for p in self.placements
                       for q in self.placements):
                    pairs.append((self.subtree(x), self.subtree(y)))
        return tuple(pairs)

    def partitions(self) -> tuple[frozenset[Placement], ...]:
        """All maximal sets of pairwise compatible (slice-disjoint) placements.

        A30 -> 5, A100/H100 -> 19 (Figure 1). Sorted by descending largest size,
        then lexicographically, so the order is deterministic.
        """
        return self._partitions

    @cached_property
    def _partitions(self) -> tuple[frozenset[Placement], ...]:
        found: list[frozenset[Placement]] = []
        ps = list(self.placements)

        def extend(chosen: list[Placement], used: frozenset[int], idx: int) -> None:
            if idx == len(ps):
                # maximal: no placement can be added
                if all(not p.slices.isdisjoint(used) for p in ps if p not in chosen):
                    found.append(frozenset(chosen))
                return
            p = ps[idx]
            if p.slices.isdisjoint(used):
                extend(chosen + [p], used | p.slices, idx + 1)
            extend(chosen, used, idx + 1)

        extend([], frozenset(), 0)

        def sort_key(part: frozenset[Placement]) -> tuple:
            return tuple(sorted(((-p.size, p.start) for p in part)))

        return tuple(sorted(set(found), key=sort_key))

    def is_valid_partition(self, placements: Iterable[Placement]) -> bool:
        """True if the placements are pairwise disjoint, i.e. part of some valid partition."""
        seen: set[int] = set()
        for p in placements:
            if not seen.isdisjoint(p.slices):
                return False
            seen |= p.slices
        return True

    @property
    def reconfigurable(self) -> bool:
        """False when every create and destroy time is zero (reconfiguration disabled)."""
        return any(v > 0 for v in self.create_time.values()) or any(v > 0 for v in self.destroy_time.values())

    def without_reconfiguration(self) -> "GPUSpec":
        """A copy of this GPU whose create/destroy times are all zero."""
        zero = _frozen({s: 0.0 for s in self.sizes})
        return replace(self, create_time=zero, destroy_time=zero)

    # -- identity and serialisation --------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON-able spec, readable back by :func:`from_dict`."""
        return {
            "name": self.name,
            "slices": self.num_slices,
            "memory_per_slice_gb": self.memory_per_slice_gb,
            "placements": [{"size": p.size, "start": p.start, "slices": sorted(p.slices)}
                           for p in self.placements],
            "tree": {f"{k[0]}@{k[1]}": [f"{c[0]}@{c[1]}" for c in v] for k, v in self.tree.items() if v},
            "create_time": {str(s): t for s, t in sorted(self.create_time.items())},
            "destroy_time": {str(s): t for s, t in sorted(self.destroy_time.items())},
            "memory_gb": {str(s): m for s, m in sorted(self.memory_gb.items())},
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GPUSpec) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.name, self.num_slices, tuple(self.placements)))

    def __repr__(self) -> str:
        tag = "" if self.reconfigurable else ", no reconfiguration"
        return f"GPUSpec({self.name}, {self.num_slices} slices, sizes {self.sizes}{tag})"

    def tree_lines(self) -> list[str]:
        """The repartitioning tree as indented text lines (Figure 4)."""
        lines: list[str] = []

        def walk(p: Placement, depth: int) -> None:
            lines.append("  " * depth + f"{p.name} slices {sorted(p.slices)}")
            for c in self.children(p):
                walk(c, depth + 1)

        walk(self.root, 0)
        return lines


# ---------------------------------------------------------------------------
# Construction and validation

#: Most slices of a user-defined GPU (MIG GPUs have 4, 7 or 8).
MAX_SLICES = 64
#: Most placements of a user-defined GPU (the A100 has 15).
MAX_PLACEMENTS = 256
#: Most sets of pairwise compatible placements (the A100 has 298). The
#: partitions are enumerated over these sets, so they bound that work: a
#: flat tree of 13 single slices under the root has 8,193; one of 16, 65,537
#: (about a second); a binary tree over 16 slices, 458,330 (minutes).
MAX_COMPATIBLE_SETS = 10_000

_SPEC_FIELDS = ("name", "slices", "memory_per_slice_gb", "placements", "tree", "create_time", "destroy_time",
                "memory_gb", "partitions")


def _digits(text: str) -> int | None:
    """The integer written as plain decimal digits without a leading zero, else None."""
    if text.isascii() and text.isdigit() and str(int(text)) == text:
        return int(text)
    return None


def _parse_key(text: Any, where: str, name: str) -> tuple[int, int]:
    parts = text.split("@") if isinstance(text, str) else []
    nums = [_digits(x) for x in parts]
    if len(nums) != 2 or None in nums:
        raise GPUSpecError(f"placement {text!r} must be written size@start, e.g. 3@4",
                           source=name, field=where)
    return nums[0], nums[1]  # type: ignore[return-value]


def _times(raw: Any, sizes: tuple[int, ...], what: str, name: str) -> dict[int, float]:
    if not isinstance(raw, Mapping):
        raise GPUSpecError(f"must map each size to seconds, got {type(raw).__name__}", source=name, field=what)
    out: dict[int, float] = {}
    for k, v in raw.items():
        s = _digits(k) if isinstance(k, str) else (k if isinstance(k, int) and not isinstance(k, bool) else None)
        if s is None:
            raise GPUSpecError(f"size {k!r} is not an integer written in plain digits", source=name,
                               field=f"{what}.{k}")
        if s in out:
            raise GPUSpecError(f"size {s} is given twice", source=name, field=f"{what}.{k}")
        out[s] = files.real(v, lo=0.0, source=name, field=f"{what}.{k}", error=GPUSpecError)
    missing = [s for s in sizes if s not in out]
    if missing:
        raise GPUSpecError(f"missing sizes {missing}", source=name, field=what)
    extra = [s for s in out if s not in sizes]
    if extra:
        raise GPUSpecError(f"sizes {extra} have no placement", source=name, field=what)
    return out


def _compatible_sets(root: tuple[int, int], tree: Mapping[tuple[int, int], tuple[tuple[int, int], ...]],
                     cap: int) -> int:
    """Number of sets of pairwise disjoint placements (the empty set included), capped at ``cap + 1``.

    In a valid tree two placements share a slice exactly when one is an
    ancestor of the other, so these sets are the antichains of the tree:
    ``A(v) = 1 + prod A(child)`` (either ``v`` alone or a set per child).
    """
    order, stack = [], [root]
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(tree.get(k, ()))
    count: dict[tuple[int, int], int] = {}
    for k in reversed(order):
        prod = 1
        for c in tree.get(k, ()):
            prod = min(prod * count[c], cap + 1)
        count[k] = min(1 + prod, cap + 1)
    return count[root]


def from_dict(spec: Mapping[str, Any], *, source: str | None = None) -> GPUSpec:
    """Build and validate a GPU from a JSON-like dict (the format of :meth:`GPUSpec.to_dict`).

    The spec must have the two properties FAR relies on (Sec. 1.2): instances
    are organised hierarchically (a tree whose root occupies every slice, a
    child occupying a subset of its parent's slices, siblings disjoint, every
    placement in the tree exactly once), so that any combination of disjoint
    tree nodes is a valid partition.

    Fields are read strictly (``"slices": 7.0`` or ``"7"`` is not an integer,
    an unknown field is an error), and the size of a spec is bounded: at
    most :data:`MAX_SLICES` slices, :data:`MAX_PLACEMENTS` placements and
    :data:`MAX_COMPATIBLE_SETS` sets of compatible placements, so that no
    spec makes the toolkit work without end.

    Examples
    --------
    >>> spec = {"name": "Toy2", "slices": 2, "memory_per_slice_gb": 8,
    ...         "placements": [{"size": 2, "start": 0, "slices": [0, 1]},
    ...                        {"size": 1, "start": 0, "slices": [0]}, {"size": 1, "start": 1, "slices": [1]}],
    ...         "tree": {"2@0": ["1@0", "1@1"]},
    ...         "create_time": {"1": 0.1, "2": 0.1}, "destroy_time": {"1": 0.1, "2": 0.1}}
    >>> len(from_dict(spec).partitions())
    2
    >>> from_dict({"name": "Huge", "slices": 10**9, "placements": []})
    Traceback (most recent call last):
    ...
    instances.errors.GPUSpecError: Huge: field slices: must be an integer between 1 and 64, got 1000000000
    """
    if not isinstance(spec, Mapping):
        raise GPUSpecError("a GPU spec must be an object", source=source, field="gpu")
    raw_name = spec.get("name")
    name = "custom" if raw_name is None else files.text(raw_name, empty=False, source=source, field="name",
                                                        error=GPUSpecError)
    where = source or name
    files.no_unknown_fields(spec, _SPEC_FIELDS, source=where, error=GPUSpecError)
    if "slices" not in spec:
        raise GPUSpecError("missing 'slices' (the number of slices)", source=where, field="slices")
    num_slices = files.integer(spec["slices"], lo=1, hi=MAX_SLICES, source=where, field="slices",
                               error=GPUSpecError)
    mem_slice = files.real(spec.get("memory_per_slice_gb", 0.0), lo=0.0, source=where, field="memory_per_slice_gb",
                           error=GPUSpecError)

    raw_pl = spec.get("placements")
    if not isinstance(raw_pl, list) or not raw_pl:
        raise GPUSpecError("'placements' must be a non-empty list", source=where, field="placements")
    if len(raw_pl) > MAX_PLACEMENTS:
        raise GPUSpecError(f"{len(raw_pl)} placements; at most {MAX_PLACEMENTS} are supported", source=where,
                           field="placements")
    by_key: dict[tuple[int, int], Placement] = {}
    for i, rp in enumerate(raw_pl):
        fld = f"placements[{i}]"
        if not isinstance(rp, Mapping) or "size" not in rp or "start" not in rp:
            raise GPUSpecError("needs integer 'size', 'start' and a list 'slices'", source=where, field=fld)
        files.no_unknown_fields(rp, ("size", "start", "slices"), source=where, where=fld, error=GPUSpecError)
        size = files.integer(rp["size"], lo=1, hi=num_slices, source=where, field=f"{fld}.size",
                             error=GPUSpecError)
        start = files.integer(rp["start"], lo=0, hi=num_slices - 1, source=where, field=f"{fld}.start",
                              error=GPUSpecError)
        if start + size > num_slices:
            raise GPUSpecError(f"{size}@{start} does not fit in {num_slices} slices", source=where, field=fld)
        raw_occ = rp.get("slices", list(range(start, start + size)))
        if not isinstance(raw_occ, list) or not raw_occ:
            raise GPUSpecError("'slices' must be a non-empty list of slice numbers", source=where,
                               field=f"{fld}.slices")
        occ_list = [files.integer(x, source=where, field=f"{fld}.slices", error=GPUSpecError) for x in raw_occ]
        occ = frozenset(occ_list)
        if len(occ) != len(occ_list):
            raise GPUSpecError(f"a slice is listed twice in {occ_list}", source=where, field=f"{fld}.slices")
        if not set(range(start, start + size)) <= occ or max(occ) >= num_slices or min(occ) < 0:
            raise GPUSpecError(f"{size}@{start}: occupied slices {sorted(occ)} must contain its compute "
                               f"slices and lie in 0..{num_slices - 1}", source=where, field=fld)
        if (size, start) in by_key:
            raise GPUSpecError(f"placement {size}@{start} listed twice", source=where, field=fld)
        by_key[(size, start)] = Placement(size, start, occ)

    raw_tree = spec.get("tree", {})
    if not isinstance(raw_tree, Mapping):
        raise GPUSpecError("'tree' must map a placement to its children", source=where, field="tree")
    tree: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}
    for parent_txt, kids_txt in raw_tree.items():
        pk = _parse_key(parent_txt, "tree", where)
        if not isinstance(kids_txt, list):
            raise GPUSpecError("must be a list of child placements such as \"1@0\"", source=where,
                               field=f"tree.{parent_txt}")
        kids = tuple(_parse_key(c, f"tree.{parent_txt}", where) for c in kids_txt)
        for k in (pk, *kids):
            if k not in by_key:
                raise GPUSpecError(f"tree names {k[0]}@{k[1]}, which is not a placement", source=where, field="tree")
        if pk in tree:
            raise GPUSpecError(f"{pk[0]}@{pk[1]} is a key twice (written two ways)", source=where, field="tree")
        tree[pk] = kids

    # property (1): a single tree over all placements
    parent_of: dict[tuple[int, int], tuple[int, int]] = {}
    for pk, kids in tree.items():
        for c in kids:
            if c in parent_of:
                raise GPUSpecError(f"{c[0]}@{c[1]} has two parents (or is listed twice)", source=where,
                                   field="tree")
            parent_of[c] = pk
    roots = [k for k in by_key if k not in parent_of]
    full = frozenset(range(num_slices))
    if len(roots) != 1:
        raise GPUSpecError(f"the repartitioning tree must have one root, found {len(roots)}: "
                           f"{', '.join(f'{r[0]}@{r[1]}' for r in roots)}", source=where, field="tree")
    root = roots[0]
    if by_key[root].slices != full:
        raise GPUSpecError(f"root {root[0]}@{root[1]} must occupy every slice", source=where, field="tree")

    order: list[tuple[int, int]] = []
    queue = [root]
    seen = set()
    while queue:
        k = queue.pop(0)
        if k in seen:
            raise GPUSpecError("the repartitioning tree has a cycle", source=where, field="tree")
        seen.add(k)
        order.append(k)
        kids = tree.get(k, ())
        for c in kids:
            if not by_key[c].slices <= by_key[k].slices:
                raise GPUSpecError(f"child {c[0]}@{c[1]} occupies slices outside its parent {k[0]}@{k[1]}",
                                   source=where, field="tree")
        for a, b in itertools.combinations(kids, 2):
            if by_key[a].intersects(by_key[b]):
                raise GPUSpecError(f"siblings {a[0]}@{a[1]} and {b[0]}@{b[1]} share a slice", source=where,
                                   field="tree")
        queue.extend(kids)
    if len(order) != len(by_key):
        missing = sorted(set(by_key) - set(order))
        raise GPUSpecError(f"placements not reachable from the root: {missing}", source=where, field="tree")
    sets = _compatible_sets(root, tree, MAX_COMPATIBLE_SETS)
    if sets > MAX_COMPATIBLE_SETS:
        raise GPUSpecError(f"the tree allows more than {MAX_COMPATIBLE_SETS:,} sets of compatible placements "
                           f"(the A100 has 298); partitions could not be enumerated in reasonable time",
                           source=where, field="tree")

    placements = tuple(by_key[k] for k in order)
    sizes = tuple(sorted({p.size for p in placements}))
    create = _times(spec.get("create_time", {s: 0.0 for s in sizes}), sizes, "create_time", where)
    destroy = _times(spec.get("destroy_time", {s: 0.0 for s in sizes}), sizes, "destroy_time", where)
    raw_mem = spec.get("memory_gb")
    if raw_mem is None:
        memory = {s: mem_slice * max(len(p.slices) for p in placements if p.size == s) for s in sizes}
    else:
        memory = _times(raw_mem, sizes, "memory_gb", where)

    gpu = GPUSpec(name=name, num_slices=num_slices, memory_per_slice_gb=mem_slice, placements=placements,
                  tree=MappingProxyType({k: v for k, v in tree.items()}), create_time=_frozen(create),
                  destroy_time=_frozen(destroy), memory_gb=_frozen(memory))

    listed = spec.get("partitions")
    if listed is not None:
        if not isinstance(listed, list):
            raise GPUSpecError("must be a list of partitions (lists of placements such as \"1@0\")",
                               source=where, field="partitions")
        want = set()
        for i, part in enumerate(listed):
            if not isinstance(part, list):
                raise GPUSpecError("must be a list of placements such as \"1@0\"", source=where,
                                   field=f"partitions[{i}]")
            keys = [_parse_key(x, f"partitions[{i}]", where) for x in part]
            if any(k not in by_key for k in keys):
                raise GPUSpecError("names an unknown placement", source=where, field=f"partitions[{i}]")
            want.add(frozenset(by_key[k] for k in keys))
        got = set(gpu.partitions())
        if want != got:
            raise GPUSpecError(
                "the listed partitions are not the maximal sets of disjoint placements "
                f"({len(want)} listed, {len(got)} derived); property (2) of Sec. 1.2 fails",
                source=where, field="partitions")
    return gpu


def load(path: str | Path) -> GPUSpec:
    """Read a GPU spec from a JSON file (see :func:`from_dict`) and register it by name.

    A spec may not take the name of a built-in GPU with other data (it would
    silently change what "A100" means for every later file).
    """
    data = files.read_json(path, GPUSpecError)
    if not isinstance(data, Mapping):
        raise GPUSpecError("the top level must be a JSON object", source=str(path))
    gpu = from_dict(data, source=str(path))
    if gpu.name in BUILTIN and gpu != BUILTIN[gpu.name]:
        raise GPUSpecError(f"{gpu.name!r} is a built-in GPU; give this spec another name", source=str(path),
                           field="name")
    register(gpu)
    return gpu


# ---------------------------------------------------------------------------
# Built-in models (Figure 1, Figure 4, Table 1)

def _builtin(name: str, num_slices: int, mem_slice: float, create: dict[int, float],
             destroy: dict[int, float], memory: dict[int, float]) -> GPUSpec:
    if num_slices == 4:  # A30
        placements = [(4, 0, range(0, 4)), (2, 0, range(0, 2)), (2, 2, range(2, 4))] + \
                     [(1, k, [k]) for k in range(4)]
        tree = {"4@0": ["2@0", "2@2"], "2@0": ["1@0", "1@1"], "2@2": ["1@2", "1@3"]}
    else:  # A100 / H100
        placements = [(7, 0, range(0, 7)), (4, 0, range(0, 4)), (3, 0, range(0, 4)), (3, 4, range(4, 7)),
                      (2, 0, range(0, 2)), (2, 2, range(2, 4)), (2, 4, range(4, 6))] + \
                     [(1, k, [k]) for k in range(7)]
        tree = {"7@0": ["4@0", "3@4"], "4@0": ["3@0"], "3@0": ["2@0", "2@2"], "2@0": ["1@0", "1@1"],
                "2@2": ["1@2", "1@3"], "3@4": ["2@4", "1@6"], "2@4": ["1@4", "1@5"]}
    spec = {
        "name": name, "slices": num_slices, "memory_per_slice_gb": mem_slice,
        "placements": [{"size": s, "start": b, "slices": list(occ)} for s, b, occ in placements],
        "tree": tree,
        "create_time": {str(k): v for k, v in create.items()},
        "destroy_time": {str(k): v for k, v in destroy.items()},
        "memory_gb": {str(k): v for k, v in memory.items()},
    }
    return from_dict(spec, source=f"built-in {name}")


BUILTIN: dict[str, GPUSpec] = {
    "A30": _builtin("A30", 4, 6.0, {1: 0.11, 2: 0.12, 4: 0.13}, {1: 0.10, 2: 0.10, 4: 0.10},
                    {1: 6.0, 2: 12.0, 4: 24.0}),
    "A100": _builtin("A100", 7, 5.0, {1: 0.16, 2: 0.17, 3: 0.20, 4: 0.21, 7: 0.24},
                     {1: 0.20, 2: 0.20, 3: 0.21, 4: 0.21, 7: 0.22},
                     {1: 5.0, 2: 10.0, 3: 20.0, 4: 20.0, 7: 40.0}),
    "H100": _builtin("H100", 7, 10.0, {1: 0.16, 2: 0.21, 3: 0.33, 4: 0.38, 7: 0.42},
                     {1: 0.21, 2: 0.23, 3: 0.25, 4: 0.26, 7: 0.26},
                     {1: 10.0, 2: 20.0, 3: 40.0, 4: 40.0, 7: 80.0}),
}

_registry: dict[str, GPUSpec] = dict(BUILTIN)


def register(gpu: GPUSpec) -> None:
    """Make a user-defined GPU available to :func:`get` (and to files naming it)."""
    _registry[gpu.name] = gpu


def names() -> tuple[str, ...]:
    return tuple(_registry)


def get(name: str | GPUSpec) -> GPUSpec:
    """The GPU called ``name`` ("A30", "A100", "H100" or a registered one).

    Raises
    ------
    UnknownGPUError
        If no GPU has that name; the message lists the known ones.
    """
    if isinstance(name, GPUSpec):
        return name
    try:
        return _registry[str(name)]
    except KeyError:
        raise UnknownGPUError(f"unknown GPU {name!r}; known: {', '.join(_registry)} "
                              f"(define others with instances.gpus.load(path))", field="gpu") from None
