"""AutoGen's contributed extras (``autogen.agentchat.contrib``): agent capabilities, ...

Nothing here is imported by ``import parley``; import the modules you use, e.g.
``from parley.agentchat.contrib.capabilities import transform_messages, transforms``.
"""
