"""Where everything a user sees and types goes (AutoGen's ``autogen.io``).

Agents print and ask for human input through ``IOStream.get_default()``. Importing this package
makes the global default an :class:`IOConsole` (the terminal); ``IOStream.set_default(stream)``
replaces it for one thread or asyncio task. :class:`IOScripted` plays the human from a script
(tests, scripts, notebooks); :class:`IOWebsockets` talks to a browser (needs ``websockets``).
Those two are imported on first access, as are what ``agent.run(...)`` returns
(:mod:`parley.io.run_response`: ``RunResponse``, ``AsyncRunResponse``) and the processors of its
events (:mod:`parley.io.processors`: ``ConsoleEventProcessor``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports
from .base import InputStream, IOStream, OutputStream
from .console import IOConsole

__all__ = [
    "AsyncConsoleEventProcessor",
    "AsyncRunResponse",
    "ConsoleEventProcessor",
    "IOConsole",
    "IOScripted",
    "IOStream",
    "IOWebsockets",
    "InputExhaustedError",
    "InputStream",
    "OutputStream",
    "RunResponse",
]

if TYPE_CHECKING:
    from .processors import AsyncConsoleEventProcessor, ConsoleEventProcessor
    from .run_response import AsyncRunResponse, RunResponse
    from .scripted import InputExhaustedError, IOScripted
    from .websockets import IOWebsockets
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "IOScripted": ".scripted",
            "InputExhaustedError": ".scripted",
            "IOWebsockets": ".websockets",
            "RunResponse": ".run_response",
            "AsyncRunResponse": ".run_response",
            "ConsoleEventProcessor": ".processors",
            "AsyncConsoleEventProcessor": ".processors",
        },
    )

IOStream.set_global_default(IOConsole())
