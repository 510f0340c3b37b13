"""The Docker sandbox: the container that code runs in for ``DockerCommandLineCodeExecutor``
(:mod:`parley.coding.docker_commandline_code_executor`, AutoGen's path, the public executor) and
``DockerJupyterServer`` (:mod:`parley.coding.jupyter.docker_jupyter_server`).

- ``_sandbox``: one locked-down container (``Sandbox``): created on first use, code run in it
  with ``docker exec``, killed at a timeout or a cancellation, removed with its owner;
- ``_keeper``: the container's PID 1, which reaps orphans and kills a block on request;
- ``_lifeline``: the connection whose end stops the container when its process dies;
- ``_owner``: the labels that name a container's owner, and removing containers whose owner is
  gone;
- ``_engine``: reaching the engine (``docker`` imported only here, on first use) and finding
  images.

The images parley builds for it are :mod:`parley.coding.images` (``parley sandbox build``).
"""
