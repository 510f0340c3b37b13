"""How the capabilities speak: through the current ``IOStream``, in yellow (AutoGen's colour)."""

from __future__ import annotations

from ....formatting_utils import colored

__all__ = ["say"]


def say(text: str) -> None:
    """Print ``text`` in yellow to the current ``IOStream``."""
    from ....io import IOStream  # the console only once something is said

    IOStream.get_default().print(colored(text, "yellow"), flush=True)
