"""FAR's makespans are pinned: phase 2 and the refined plan, bit for bit.

The table (``data/far_pinned.json``) was recorded before any change to FAR's
speed or tie options; every change since must leave the default rule's
makespans exactly as they were.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from heuristics import far
from instances import mig

_spec = importlib.util.spec_from_file_location("far_pinned_cases", Path(__file__).with_name("far_pinned_cases.py"))
cases_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases_mod)
TABLE = json.loads(cases_mod.TABLE.read_text())


def _check_pinned(which):
    full = which == "full"
    for key, p in cases_mod.cases(full):
        r = far.plan(p)
        assert [r.phase2_makespan.hex(), r.makespan.hex()] == TABLE[which][key], key
        assert mig.check(p, r.schedule) == [], key


def test_pinned_makespans_are_reproduced_bit_for_bit():
    _check_pinned("default")


@pytest.mark.slow
def test_pinned_makespans_full_table():
    _check_pinned("full")
