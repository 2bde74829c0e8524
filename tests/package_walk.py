"""The project's modules, found by walking its packages: the discovery tests' one source of what exists."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Iterable, Iterator


def modules(packages: Iterable[str]) -> Iterator[ModuleType]:
    """Each package of ``packages``, then each of its modules (``__main__`` left out: it runs on import)."""
    for pkg in packages:
        package = importlib.import_module(pkg)
        yield package
        for info in pkgutil.iter_modules(package.__path__):
            if info.name != "__main__":
                yield importlib.import_module(f"{pkg}.{info.name}")
