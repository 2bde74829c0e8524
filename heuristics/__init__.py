"""Heuristics: FAR and every baseline and heuristic from the papers the toolkit implements (docs/references.md).

One module per problem family: ``far`` (and its baselines) for MIG, ``hetero``,
``pairing``, ``realtime``, ``case``.
"""
