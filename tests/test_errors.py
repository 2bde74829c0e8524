"""Bad arguments raise the toolkit's own error type (a ValueError), with a message naming the choices."""

import pytest

from instances import mig
from instances import realtime as rt
from instances.errors import InstanceError, OptionError


def test_option_errors_are_the_projects_own_value_errors():
    assert issubclass(OptionError, InstanceError) and issubclass(OptionError, ValueError)


def test_unknown_heuristic_name():
    from heuristics import realtime

    problem = rt.generate(6, 2.0, seed=0)
    with pytest.raises(OptionError, match="unknown heuristic 'XYZ'"):
        realtime.run(problem, "XYZ")


def test_refinement_parameters_out_of_range():
    from heuristics import far

    p = mig.generate(6, "A30", seed=1)
    with pytest.raises(OptionError, match="max_iterations must be >= 0"):
        far.schedule(p, max_iterations=-1)
