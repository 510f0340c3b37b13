"""The core every layer of parley runs on; users never import it.

- :mod:`.calls`: calling user code (a reply function, hook, tool) whether it is sync or async,
  without stalling the event loop.
- :mod:`.runtime` (with :mod:`.loop_scope` and :mod:`.worker`): the one owner of event loops,
  worker threads, cancel tokens and the reset after a fork; the sync API runs through it.
- :mod:`.reports` (over :mod:`.events`): every kind of step and event parley reports, typed,
  and the listeners (runtime logging, tracing, the web page) that receive them.
- :mod:`.journal`: the hook where a durable chat's journal records and replays steps.
- :mod:`.lifetime`: with-blocks for objects that own threads, servers or processes.

Nothing here imports the layers above (``pyproject.toml``'s import contracts check it), so each
module can be read on its own.
"""
