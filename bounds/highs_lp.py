"""HiGHS mechanics shared by every family: a silent model, the process's thread pool, a guarded LP run.

HiGHS keeps one thread pool per process, sized by the first model that runs
(HiGHS's default thread count, 0, takes a share of the machine's cores). A
later model that asks for another explicit count is refused: ``run`` returns
an error and the model status stays ``kNotset``, with no solution. A result
would then depend on which model of the process ran first, and on the
machine's cores. So the toolkit's own models leave the count at HiGHS's
default, which fits any pool (:func:`silent_highs`); a thread count a user
asks for goes through :func:`use_threads`, which resizes the pool first; and
an LP is run by :func:`run_lp`, which tells its caller when no optimum came
back.

Examples
--------
>>> h = silent_highs()
>>> _ = h.addVar(0.0, 1.0); _ = h.changeColCost(0, -1.0)
>>> run_lp(h) == highspy.HighsModelStatus.kOptimal, h.getInfo().objective_function_value
(True, -1.0)
"""

from __future__ import annotations

import highspy

from instances.options import known_options

__all__ = ["silent_highs", "use_threads", "run_lp"]

#: The pool size the last :func:`use_threads` set (``None``: HiGHS's own, as first run).
_pool: int | None = None


@known_options
def silent_highs() -> highspy.Highs:
    """A HiGHS model with its log off and HiGHS's default thread count (fits any thread pool)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


@known_options
def use_threads(threads: int) -> None:
    """Make the process's HiGHS thread pool ``threads`` wide before a model that asks for that many runs.

    The pool is rebuilt only when the last size set here differs, so
    successive solves with the same count share one pool. Call it between
    runs, never while a HiGHS model of this process is running.

    Examples
    --------
    >>> use_threads(2)
    >>> h = silent_highs(); _ = h.setOptionValue("threads", 2); _ = h.addVar(0.0, 1.0)
    >>> run_lp(h).name
    'kOptimal'
    """
    global _pool
    if threads != _pool:
        highspy.Highs.resetGlobalScheduler(True)
        # build the new pool now: were a model with the default count the next to run, it would size it
        h = silent_highs()
        h.setOptionValue("threads", threads)
        h.addVar(0.0, 1.0)
        h.run()
        _pool = threads


@known_options
def run_lp(h: highspy.Highs) -> highspy.HighsModelStatus:
    """Run the LP ``h`` (warm-started or not); the final model status.

    A run that ends neither optimal nor at its time limit (numerical trouble
    from a warm start, seen as ``kUnknown``; or a refused run, ``kNotset``) is
    repeated once from scratch with presolve. Callers treat any status but
    ``kOptimal`` as "no LP value": no bound or verdict may rest on it.
    """
    h.run()
    status = h.getModelStatus()
    if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit):
        presolve = h.getOptionValue("presolve")
        presolve = presolve[-1] if isinstance(presolve, tuple) else presolve  # (status, value) in some versions
        h.clearSolver()
        h.setOptionValue("presolve", "on")
        h.run()
        h.setOptionValue("presolve", presolve)
        status = h.getModelStatus()
    return status
