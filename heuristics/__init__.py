"""Heuristics: FAR and every baseline and heuristic from the seed papers.

One module per problem family: ``far`` (and its baselines) for MIG, ``hetero``,
``pairing``, ``realtime``, ``case``.
"""
