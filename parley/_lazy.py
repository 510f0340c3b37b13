"""Public names of a package imported on first access, so that importing the package is cheap.

A package declares where each name lives and installs the two functions it gets back as its
module ``__getattr__`` and ``__dir__`` (PEP 562)::

    __all__ = ["Cache", "DiskCache"]
    if TYPE_CHECKING:  # what type checkers see
        from .cache import Cache
        from .disk_cache import DiskCache
    else:
        __getattr__, __dir__ = lazy_exports(
            __name__, {"Cache": ".cache", "DiskCache": ".disk_cache"}
        )

Keeping ``__getattr__`` out of the type checker's sight keeps misspelt names errors there.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    names: Mapping[str, str],
    *,
    whole: Sequence[str] = (),
    exclude: Collection[str] = (),
    submodules: Collection[str] = (),
    defines: Collection[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``.

    ``names`` maps each public name to the module (relative to ``package``) it is read from.
    The ``whole`` modules give every name of their ``__all__`` but ``exclude``; a name is
    looked for in them in order, importing each in turn. ``submodules`` are imported when read
    as attributes. A package without its own ``__all__`` gets one on first read: all these
    names plus those it ``defines`` itself. A value read once is stored in the package, so later
    reads never come back here.
    """
    exports = _Exports(package, names, whole, exclude, submodules, defines)
    return exports.module_getattr, exports.module_dir


class _Exports:
    def __init__(
        self,
        package: str,
        names: Mapping[str, str],
        whole: Sequence[str],
        exclude: Collection[str],
        submodules: Collection[str],
        defines: Collection[str],
    ) -> None:
        self._package = package
        self._names = dict(names)
        self._whole = tuple(whole)
        self._exclude = frozenset(exclude)
        self._submodules = frozenset(submodules)
        self._defines = frozenset(defines)

    def module_getattr(self, name: str) -> Any:
        value = self._lookup(name)
        setattr(sys.modules[self._package], name, value)
        return value

    def module_dir(self) -> list[str]:
        return sorted(set(vars(sys.modules[self._package])) | set(self._public_names()))

    def _public_names(self) -> list[str]:
        names = set(self._names) | self._defines
        for module in self._whole:
            names.update(self._import(module).__all__)
        return sorted(names - self._exclude)

    def _import(self, module: str) -> Any:
        return importlib.import_module(module, self._package)

    def _lookup(self, name: str) -> Any:
        if name in self._names:
            return getattr(self._import(self._names[name]), name)
        if name == "__all__":
            return self._public_names()
        if name in self._submodules:
            return self._import(f".{name}")
        if not name.startswith("_") and name not in self._exclude:
            for module_name in self._whole:
                module = self._import(module_name)
                if name in module.__all__:
                    return getattr(module, name)
        raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
