"""A batch's progress: a tqdm bar (a widget in a notebook with ipywidgets, text elsewhere), or
without tqdm a line on stderr every few seconds."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

__all__ = ["Progress", "wanted"]

_LINE_EVERY = 5.0  # seconds between the plain lines


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (ipykernel's shell)."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    try:
        app = get() if get is not None else None
    except Exception:
        return False
    return app is not None and "IPKernelApp" in getattr(app, "config", {})


def wanted(progress: bool | None) -> bool:
    """``progress=None`` (the default): on in a terminal (stderr is a TTY) and in a notebook,
    off elsewhere (logs, CI, tests)."""
    if progress is not None:
        return bool(progress)
    try:
        tty = os.isatty(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        tty = False
    return tty or in_notebook()


class Progress:
    """Chats done out of ``total``, with failures and what was spent."""

    def __init__(self, total: int, enabled: bool, desc: str) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.cost = 0.0
        self._start = time.monotonic()
        self._last_line = 0.0
        self._bar: Any = None
        self._enabled = enabled
        self._desc = desc
        if enabled:
            self._bar = _tqdm(total, desc)

    def set(self, done: int, failed: int, cost: float) -> None:
        """Report the totals so far (they only grow; a smaller ``done`` is ignored)."""
        if not self._enabled or done < self.done:
            return
        step, self.done, self.failed, self.cost = done - self.done, done, failed, cost
        if self._bar is not None:
            self._bar.set_postfix(failed=failed, cost=f"${cost:.4f}", refresh=False)
            self._bar.update(step)
        elif time.monotonic() - self._last_line >= _LINE_EVERY:
            self._line()

    def close(self) -> None:
        if not self._enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            self._line()

    def _line(self) -> None:
        self._last_line = time.monotonic()
        seconds = self._last_line - self._start
        rate = self.done / seconds if seconds > 0 else 0.0
        print(
            f"{self._desc}: {self.done}/{self.total} done, {self.failed} failed, "
            f"${self.cost:.4f}, {rate:.1f} chats/s, {seconds:.0f} s",
            file=sys.stderr,
            flush=True,
        )


def _tqdm(total: int, desc: str) -> Any:
    """A tqdm bar, or None without tqdm. In a notebook the widget needs ipywidgets; without
    it the text bar (which notebooks render too) rather than tqdm's warning."""
    try:
        from tqdm import std
    except ImportError:
        return None
    bar_class: Any = std.tqdm
    if in_notebook():
        try:
            import ipywidgets  # noqa: F401
            from tqdm import notebook

            bar_class = notebook.tqdm
        except ImportError:
            pass
    return bar_class(total=total, desc=desc, unit="chat", file=sys.stderr, dynamic_ncols=True)
