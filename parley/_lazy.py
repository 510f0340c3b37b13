"""Public names of a package imported on first access, so that importing the package is cheap.

A package declares where each name lives and installs the result as its module ``__getattr__``
and ``__dir__`` (PEP 562)::

    __all__ = ["Cache", "DiskCache"]
    if TYPE_CHECKING:  # what type checkers see
        from .cache import Cache as Cache
        from .disk_cache import DiskCache as DiskCache
    else:
        __getattr__, __dir__ = LazyExports(__name__, {"Cache": ".cache", "DiskCache": ".disk_cache"})

Keeping ``__getattr__`` out of the type checker's sight keeps misspelt names errors there.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

__all__ = ["LazyExports"]


class LazyExports:
    """The module ``__getattr__`` and ``__dir__`` of ``package``.

    ``names`` maps each public name to the module (relative to ``package``) it is read from;
    the names of ``whole`` modules are their ``__all__`` but ``exclude`` (looked up in order,
    on access);
    ``submodules`` are imported when read as attributes. A package without its own
    ``__all__`` gets one on first read: these names plus those it ``defines`` itself. A value
    read once is stored in the package, so later reads never come back here.
    """

    def __init__(
        self,
        package: str,
        names: Mapping[str, str],
        *,
        whole: Sequence[str] = (),
        exclude: Collection[str] = (),
        submodules: Collection[str] = (),
        defines: Collection[str] = (),
    ) -> None:
        self._package = package
        self._names = dict(names)
        self._whole = tuple(whole)
        self._exclude = frozenset(exclude)
        self._submodules = frozenset(submodules)
        self._defines = frozenset(defines)

    def __iter__(self) -> Iterator[Any]:
        # Unpacking gives the two functions: ``__getattr__, __dir__ = LazyExports(...)``.
        yield self.getattr
        yield self.dir

    def public_names(self) -> list[str]:
        """Every name this gives the package (imports the ``whole`` modules)."""
        names = set(self._names) | self._defines
        for module in self._whole:
            names.update(self._import(module).__all__)
        return sorted(names - self._exclude)

    def getattr(self, name: str) -> Any:
        value = self._lookup(name)
        setattr(sys.modules[self._package], name, value)
        return value

    def dir(self) -> list[str]:
        return sorted(set(vars(sys.modules[self._package])) | set(self.public_names()))

    def _import(self, module: str) -> Any:
        return importlib.import_module(module, self._package)

    def _lookup(self, name: str) -> Any:
        if name in self._names:
            return getattr(self._import(self._names[name]), name)
        if name == "__all__":
            return self.public_names()
        if name in self._submodules:
            return self._import(f".{name}")
        if not name.startswith("_") and name not in self._exclude:
            for module_name in self._whole:
                module = self._import(module_name)
                if name in module.__all__:
                    return getattr(module, name)
        raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
