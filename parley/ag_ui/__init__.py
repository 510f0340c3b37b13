"""AG-UI for parley's chats (the ``ag-ui`` extra: ``pip install 'parley[ag-ui]'``).

`AG-UI <https://docs.ag-ui.com>`_ is the protocol front ends such as CopilotKit speak to agents:
the client POSTs a ``RunAgentInput`` (thread id, run id, the conversation) and reads the run's
events as server-sent events. :class:`AGUIStream` (AG2's name) serves a parley agent that way::

    from parley.ag_ui import AGUIStream

    stream = AGUIStream(assistant, user=user)   # user: runs the tools, stands for the human
    with stream.serve() as server:              # 127.0.0.1, a free port
        print(server.url)                       # POST RunAgentInput here

    # or, in an application: Route("/agent", stream.build_asgi())

Each run is a chat (``a_run``) whose parley events (:mod:`parley.events`) are translated one by
one (``_translate``'s table): messages and streamed tokens into text messages, tool calls and
results into tool-call events, the chat's state into state snapshots, a failure into
``RUN_ERROR``. When the chat asks its human (a tool registered with ``requires_approval``, an
input prompt), the run ends with an interrupt and the chat waits; the client's next request on
the same thread answers it in ``resume`` (``_interrupts`` says the payloads) and the chat goes
on in that run. See ``website/docs/ag-ui.md``.
"""

from __future__ import annotations

from ._deps import INSTALL_HINT
from ._interrupts import APPROVAL_SCHEMA, INPUT_SCHEMA
from ._serve import AGUIServer
from .adapter import AgentFactory, AGUIStream

__all__ = [
    "APPROVAL_SCHEMA",
    "INPUT_SCHEMA",
    "INSTALL_HINT",
    "AGUIServer",
    "AGUIStream",
    "AgentFactory",
]
