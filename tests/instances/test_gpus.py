"""GPU models: Figure 1 partitions, Figure 4 trees, Table 1 times, user-defined GPUs."""

import itertools
import json

import pytest

from instances import gpus
from instances.errors import GPUSpecError, UnknownGPUError

# Figure 1, written out as the sets of instances (size@start) of each partition.
FIGURE1_A30 = [
    {"4@0"}, {"2@0", "2@2"}, {"2@0", "1@2", "1@3"}, {"1@0", "1@1", "2@2"}, {"1@0", "1@1", "1@2", "1@3"},
]
_LEFT = [{"4@0"}, {"3@0"}, {"2@0", "2@2"}, {"2@0", "1@2", "1@3"}, {"1@0", "1@1", "2@2"},
         {"1@0", "1@1", "1@2", "1@3"}]
_RIGHT = [{"3@4"}, {"2@4", "1@6"}, {"1@4", "1@5", "1@6"}]
FIGURE1_A100 = [{"7@0"}] + [a | b for a in _LEFT for b in _RIGHT]


def names(part):
    return {p.name for p in part}


@pytest.mark.parametrize("gpu,expected", [("A30", FIGURE1_A30), ("A100", FIGURE1_A100), ("H100", FIGURE1_A100)])
def test_partitions_match_figure_1(gpu, expected):
    parts = gpus.get(gpu).partitions()
    assert len(parts) == {"A30": 5}.get(gpu, 19)
    assert sorted(map(sorted, map(names, parts))) == sorted(map(sorted, expected))


def test_partitions_5_6_7_leave_slice_3_to_the_3_slice_instance():
    a100 = gpus.get("A100")
    with_30 = [p for p in a100.partitions() if "3@0" in names(p)]
    assert len(with_30) == 3
    for part in with_30:
        covered = set().union(*(p.compute_slices for p in part))
        assert 3 not in covered  # nobody computes on S3 ...
        assert 3 in set().union(*(p.slices for p in part))  # ... but it is occupied


@pytest.mark.parametrize("gpu", ["A30", "A100", "H100"])
def test_tree_is_hierarchical(gpu):
    g = gpus.get(gpu)
    assert g.root.slices == frozenset(range(g.num_slices))
    seen = [g.root]
    for p in g.placements:
        kids = g.children(p)
        for c in kids:
            assert c.slices <= p.slices
            assert g.parent(c) == p
        for a, b in itertools.combinations(kids, 2):
            assert not a.intersects(b)
        seen += kids
    assert sorted(seen) == sorted(g.placements)  # every placement exactly once


@pytest.mark.parametrize("gpu", ["A30", "A100"])
def test_any_disjoint_tree_nodes_form_a_valid_partition(gpu):
    """Property (2) of Sec. 1.2: every combination of disjoint tree nodes is part of a partition."""
    g = gpus.get(gpu)
    parts = g.partitions()
    count = 0
    for r in range(1, g.num_slices + 1):
        for combo in itertools.combinations(g.placements, r):
            if all(not a.intersects(b) for a, b in itertools.combinations(combo, 2)):
                count += 1
                assert any(set(combo) <= part for part in parts), combo
                assert g.is_valid_partition(combo)
            else:
                assert not g.is_valid_partition(combo)
    assert count > len(parts)


def test_figure_4_tree_and_table_1_times():
    a100 = gpus.get("A100")
    tree = {p.name: [c.name for c in a100.children(p)] for p in a100.placements if a100.children(p)}
    assert tree == {"7@0": ["4@0", "3@4"], "4@0": ["3@0"], "3@0": ["2@0", "2@2"], "2@0": ["1@0", "1@1"],
                    "2@2": ["1@2", "1@3"], "3@4": ["2@4", "1@6"], "2@4": ["1@4", "1@5"]}
    a30 = gpus.get("A30")
    assert {p.name: [c.name for c in a30.children(p)] for p in a30.placements if a30.children(p)} == {
        "4@0": ["2@0", "2@2"], "2@0": ["1@0", "1@1"], "2@2": ["1@2", "1@3"]}
    assert dict(a30.create_time) == {1: 0.11, 2: 0.12, 4: 0.13}
    assert dict(a30.destroy_time) == {1: 0.10, 2: 0.10, 4: 0.10}
    assert dict(a100.create_time) == {1: .16, 2: .17, 3: .20, 4: .21, 7: .24}
    assert dict(a100.destroy_time) == {1: .20, 2: .20, 3: .21, 4: .21, 7: .22}
    h100 = gpus.get("H100")
    assert dict(h100.create_time) == {1: .16, 2: .21, 3: .33, 4: .38, 7: .42}
    assert dict(h100.destroy_time) == {1: .21, 2: .23, 3: .25, 4: .26, 7: .26}
    assert a100.placement(3, 0).slices == frozenset({0, 1, 2, 3})
    assert a100.placement(3, 4).slices == frozenset({4, 5, 6})
    assert a30.sizes == (1, 2, 4) and a100.sizes == (1, 2, 3, 4, 7)


def test_without_reconfiguration_zeroes_times_only():
    a100 = gpus.get("A100")
    z = a100.without_reconfiguration()
    assert not z.reconfigurable and a100.reconfigurable
    assert set(z.create_time.values()) == {0.0} and set(z.destroy_time.values()) == {0.0}
    assert z.partitions() == a100.partitions()


def test_unknown_gpu_is_a_clear_value_error():
    with pytest.raises(UnknownGPUError, match="unknown GPU 'B200'.*A30, A100, H100") as info:
        gpus.get("B200")
    assert isinstance(info.value, ValueError)


def test_unknown_placement():
    with pytest.raises(GPUSpecError, match="A30 has no placement 2@1"):
        gpus.get("A30").placement(2, 1)


def test_user_defined_gpu_roundtrip(tmp_path):
    spec = gpus.get("A100").to_dict()
    spec["name"] = "MyA100"
    spec["partitions"] = [sorted(names(p)) for p in gpus.get("A100").partitions()]
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps(spec))
    g = gpus.load(path)
    assert gpus.get("MyA100") is g
    assert len(g.partitions()) == 19 and g.children(g.root)[1].name == "3@4"


def _toy():
    return {"name": "Toy", "slices": 2, "memory_per_slice_gb": 8,
            "placements": [{"size": 2, "start": 0, "slices": [0, 1]}, {"size": 1, "start": 0, "slices": [0]},
                           {"size": 1, "start": 1, "slices": [1]}],
            "tree": {"2@0": ["1@0", "1@1"]},
            "create_time": {"1": 0.1, "2": 0.1}, "destroy_time": {"1": 0.1, "2": 0.1}}


@pytest.mark.parametrize("mutate,message", [
    (lambda s: s["placements"][2].update(slices=[0, 1]), "siblings 1@0 and 1@1 share a slice"),
    (lambda s: s["tree"].update({"2@0": ["1@0"]}), "one root"),
    (lambda s: s["placements"][0].update(slices=[0]), "must contain its compute slices"),
    (lambda s: s["create_time"].pop("2"), "missing sizes"),
    (lambda s: s.update(partitions=[["2@0"]]), "property \\(2\\)"),
    (lambda s: s["tree"].update({"1@0": ["2@0"]}), "two parents|one root|cycle"),
    (lambda s: s["placements"].append({"size": 2, "start": 1, "slices": [1, 2]}), "does not fit"),
])
def test_broken_spec_is_rejected(mutate, message):
    spec = _toy()
    assert len(gpus.from_dict(spec).partitions()) == 2
    mutate(spec)
    with pytest.raises(GPUSpecError, match=message):
        gpus.from_dict(spec)


def test_child_outside_parent_is_rejected():
    spec = _toy()
    spec["placements"].append({"size": 1, "start": 1, "slices": [1]})
    spec["placements"] = spec["placements"][:3]
    spec["placements"][0]["slices"] = [0, 1]
    spec["slices"] = 3
    spec["placements"].append({"size": 3, "start": 0, "slices": [0, 1, 2]})
    spec["tree"] = {"3@0": ["2@0"], "2@0": ["1@0", "1@1"]}
    spec["create_time"]["3"] = spec["destroy_time"]["3"] = 0.1
    gpus.from_dict(spec)  # valid
    spec["tree"] = {"3@0": ["2@0"], "2@0": ["1@0"], "1@0": ["1@1"]}
    with pytest.raises(GPUSpecError, match="outside its parent"):
        gpus.from_dict(spec)
