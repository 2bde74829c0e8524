"""OR-Tools and HiGHS load in one process and each solves a tiny model (the pinned pair)."""

import importlib.metadata as md


def test_ortools_and_highspy_in_one_process():
    from ortools.sat.python import cp_model
    import highspy
    import pyomo.environ as pyo

    m = cp_model.CpModel()
    x = m.new_int_var(0, 10, "x")
    y = m.new_int_var(0, 10, "y")
    m.add(x + 2 * y <= 14)
    m.maximize(3 * x + 4 * y)
    solver = cp_model.CpSolver()
    assert solver.solve(m) == cp_model.OPTIMAL and solver.objective_value == 38

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    h.addVar(0, 10)
    h.addVar(0, 10)
    h.changeColsIntegrality(2, [0, 1], [highspy.HighsVarType.kInteger] * 2)
    h.changeColsCost(2, [0, 1], [-3.0, -4.0])
    h.addRow(-inf, 14, 2, [0, 1], [1.0, 2.0])
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert abs(h.getInfo().objective_function_value + 38) < 1e-9

    pm = pyo.ConcreteModel()
    pm.x = pyo.Var(within=pyo.NonNegativeIntegers, bounds=(0, 10))
    pm.y = pyo.Var(within=pyo.NonNegativeIntegers, bounds=(0, 10))
    pm.c = pyo.Constraint(expr=pm.x + 2 * pm.y <= 14)
    pm.o = pyo.Objective(expr=3 * pm.x + 4 * pm.y, sense=pyo.maximize)
    pyo.SolverFactory("appsi_highs").solve(pm)
    assert abs(pyo.value(pm.o) - 38) < 1e-9

    assert md.version("ortools").startswith("9.15") and md.version("highspy") == "1.14.0"
