"""A web page for the human in the loop (the ``web`` extra: ``pip install 'parley[web]'``).

::

    from parley import web

    with web.serve() as human:                  # 127.0.0.1, a free port, a random token
        print(human.url)                        # open it in a browser
        user.register_human_review(human.review)  # approve / reject code and tool calls there
        with human.attach():                    # prints and input() prompts go to the page
            user.initiate_chat(assistant, message="...")

The page shows every chat the process starts, live — who speaks, streamed tokens, messages, tool
calls and results, code and its output, the cost — lets the person answer input prompts,
approve or reject (with feedback) a pending code execution or tool call, and stop a chat. The
state is kept by the server: a page opened late, or a second one, shows the same; a request
is answered once (the first answer wins, later ones are refused).

``parley serve script.py`` runs an unchanged script with the page as its human. The server is
Starlette under uvicorn, in a thread of its own; see ``website/docs/web-human.md``.
"""

from __future__ import annotations

from ._deps import INSTALL_HINT
from ._handle import WebHuman, serve
from ._records import AnswerRefusedError, HumanRequest, WebHumanClosedError
from ._stream import WebIOStream

__all__ = [
    "INSTALL_HINT",
    "AnswerRefusedError",
    "HumanRequest",
    "WebHuman",
    "WebHumanClosedError",
    "WebIOStream",
    "serve",
]
