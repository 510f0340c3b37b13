"""The toolkit: the tools, resources and prompts of one or more MCP servers, registered on
agents the way ``register_function`` registers a Python function (the caller's model sees the
tool, the executor runs it).

The JSON schema a server declares for a tool goes to the model unchanged. A call goes through
parley's tool path (``agentchat/_replies.execute_function``): an error result, a timeout or a
dead server raises :class:`~parley.exceptions.MCPCallError`, whose text the model reads as the
tool's result (``Error: ...``); cancelling the chat cancels the request, and the SDK tells the
server (``notifications/cancelled``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._core.lifetime import AsyncClosesOnExit, ClosesOnExit
from .._core.runtime import run_sync
from ..exceptions import MCPCallError, MCPToolNameError
from ._results import content_text, prompt_text, resource_text, tool_content
from ._session import Connection

if TYPE_CHECKING:
    from ..agentchat.conversable_agent import ConversableAgent
    from ..types import ToolResultContent

__all__ = ["MCPTool", "MCPToolkit"]


@dataclass(frozen=True)
class MCPTool:
    """A tool a server offers: its name there, description, input schema and whether the
    server says calling it twice is harmless (``readOnlyHint`` or ``idempotentHint``)."""

    server: str
    name: str
    description: str
    input_schema: Mapping[str, Any]
    repeatable: bool


class MCPToolkit(AsyncClosesOnExit, ClosesOnExit):
    """Tools, resources and prompts of connected MCP servers. Use it as an async context
    manager (or call :meth:`aclose`), or, from sync code, with ``with`` (or :meth:`close`):
    closing ends the connections, and a stdio server's process with its connection."""

    def __init__(self, connections: list[Connection], tools: list[MCPTool]) -> None:
        self._connections = {c.name: c for c in connections}
        self._tools = tools
        self._named: dict[str, list[MCPTool]] = {}  # looked up at every call
        for tool in tools:
            self._named.setdefault(tool.name, []).append(tool)

    @property
    def tools(self) -> list[MCPTool]:
        return list(self._tools)

    @property
    def servers(self) -> list[str]:
        return list(self._connections)

    async def aclose(self) -> None:
        """Close every connection (concurrently); a session the user opened stays open."""
        await asyncio.gather(*(c.aclose() for c in self._connections.values()))

    def close(self) -> None:
        """:meth:`aclose`, blocking (for a toolkit made by :func:`parley.mcp.connect_sync`)."""
        run_sync(self.aclose())

    # --- calls -------------------------------------------------------------------------------

    def _connection(self, server: str | None) -> Connection:
        if server is None:
            if len(self._connections) != 1:
                raise ValueError(f"name the server: this toolkit has {sorted(self._connections)}")
            return next(iter(self._connections.values()))
        try:
            return self._connections[server]
        except KeyError:
            raise ValueError(
                f"no MCP server {server!r}; known: {sorted(self._connections)}"
            ) from None

    def _tool(self, name: str, server: str | None) -> MCPTool:
        found = [t for t in self._named.get(name, ()) if server in (None, t.server)]
        if len(found) != 1:
            where = f" on {server!r}" if server else ""
            problem = "no tool" if not found else "several tools"
            raise ValueError(
                f"{problem} named {name!r}{where} (servers: {sorted(self._connections)})"
            )
        return found[0]

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, server: str | None = None
    ) -> ToolResultContent:
        """Call a tool; its result as text, or, when it holds images, as content parts (text
        and ``image_url`` parts, the form a tool message carries: see
        website/docs/tutorial/tools.md). Raises :class:`MCPCallError` when the server answers
        with an error, takes longer than its ``timeout`` or cannot be reached."""
        tool = self._tool(name, server)
        connection = self._connection(tool.server)
        args = dict(arguments or {})
        result = await connection.request(
            f"tool {name!r}",
            lambda session: session.call_tool(name, args),
            retry_after_reconnect=tool.repeatable,
        )
        if result.is_error:
            text = content_text(list(result.content), result.structured_content)
            raise MCPCallError(tool.server, f"tool {name!r} failed: {text or 'no detail given'}")
        return tool_content(list(result.content), result.structured_content)

    async def read_resource(self, uri: str, *, server: str | None = None) -> str:
        """A resource's contents as text."""
        connection = self._connection(server)
        result = await connection.request(
            f"resource {uri!r}", lambda session: session.read_resource(uri)
        )
        return resource_text(list(result.contents))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, server: str | None = None
    ) -> str:
        """A prompt filled with ``arguments``, as text a user can put in a message."""
        connection = self._connection(server)
        args = dict(arguments or {})
        result = await connection.request(
            f"prompt {name!r}", lambda session: session.get_prompt(name, args)
        )
        return prompt_text(list(result.messages))

    async def list_resources(self, *, server: str | None = None) -> list[str]:
        """The URIs of a server's resources."""
        connection = self._connection(server)
        result = await connection.request("resources", lambda session: session.list_resources())
        return [str(r.uri) for r in result.resources]

    async def list_prompts(self, *, server: str | None = None) -> list[str]:
        """The names of a server's prompts."""
        connection = self._connection(server)
        result = await connection.request("prompts", lambda session: session.list_prompts())
        return [p.name for p in result.prompts]

    # --- registration ------------------------------------------------------------------------

    def _chosen(
        self,
        prefix: str | None,
        include: Iterable[str] | None,
        exclude: Iterable[str] | None,
        resources_as_tools: bool,
        idempotent: Callable[[MCPTool], bool],
    ) -> dict[str, tuple[str, Mapping[str, Any], Callable[..., Any]]]:
        """``{registered name: (description, parameters, function)}`` of the chosen tools."""
        wanted = None if include is None else set(include)
        unwanted = set(exclude or ())
        known = {t.name for t in self._tools}
        unknown = ((wanted or set()) | unwanted) - known
        if unknown:
            raise ValueError(f"include/exclude name tools no server offers: {sorted(unknown)}")
        chosen: dict[str, tuple[str, Mapping[str, Any], Callable[..., Any]]] = {}
        owners: dict[str, str] = {}
        for tool in self._tools:
            if (wanted is not None and tool.name not in wanted) or tool.name in unwanted:
                continue
            registered = f"{prefix or ''}{tool.name}"
            if registered in chosen:
                raise MCPToolNameError(
                    tool.server,
                    f"tool {tool.name!r} and server {owners[registered]!r}'s tool of the same "
                    f"name would both be registered as {registered!r}: register them with "
                    "different prefixes",
                )
            owners[registered] = tool.server
            function = self._function(tool, idempotent(tool))
            chosen[registered] = (tool.description, tool.input_schema, function)
        if resources_as_tools:
            for registered, entry in self._resource_tools(prefix or "").items():
                chosen[registered] = entry
        return chosen

    def _function(self, tool: MCPTool, idempotent: bool) -> Callable[..., Any]:
        from ..agentchat._journaled import mark_idempotent

        async def call_mcp_tool(**arguments: Any) -> ToolResultContent:
            return await self.call_tool(tool.name, arguments, server=tool.server)

        call_mcp_tool.__name__ = tool.name
        call_mcp_tool.__qualname__ = f"{tool.server}.{tool.name}"
        mark_idempotent(call_mcp_tool, idempotent)
        return call_mcp_tool

    def _idempotence(self, idempotent: bool | Iterable[str] | None) -> Callable[[MCPTool], bool]:
        """Whether a durable chat may simply rerun a tool's unfinished call: as its server
        says by default (MCP's default for a tool that says nothing is "not idempotent")."""
        if idempotent is None:
            return lambda tool: tool.repeatable
        if isinstance(idempotent, bool):
            return lambda tool: idempotent
        names = self._named_tools("idempotent", idempotent)
        return lambda tool: tool.name in names

    def _named_tools(self, option: str, names: Iterable[str]) -> set[str]:
        """The tool names an option lists, checked: a bare string and unknown names refused."""
        if isinstance(names, str):
            raise TypeError(
                f"{option}= takes a bool or a list of tool names, got the string {names!r} "
                f"(write [{names!r}] for one tool)"
            )
        named = set(names)
        unknown = named - {t.name for t in self._tools}
        if unknown:
            raise ValueError(f"{option}= names tools no server offers: {sorted(unknown)}")
        return named

    def _resource_tools(
        self, prefix: str
    ) -> dict[str, tuple[str, Mapping[str, Any], Callable[..., Any]]]:
        servers = sorted(self._connections)
        server_param: dict[str, Any] = {"type": "string", "enum": servers}
        several = len(servers) > 1

        async def read_resource(uri: str, server: str | None = None) -> str:
            return await self.read_resource(uri, server=server)

        async def get_prompt(
            name: str, arguments: Mapping[str, str] | None = None, server: str | None = None
        ) -> str:
            return await self.get_prompt(name, arguments, server=server)

        def params(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
            if several:
                properties = {**properties, "server": server_param}
                required = [*required, "server"]
            return {"type": "object", "properties": properties, "required": required}

        return {
            f"{prefix}read_resource": (
                "Read a resource of an MCP server by its URI; its contents as text.",
                params({"uri": {"type": "string", "description": "The resource's URI."}}, ["uri"]),
                read_resource,
            ),
            f"{prefix}get_prompt": (
                "Get a prompt of an MCP server, filled with its arguments, as text.",
                params(
                    {
                        "name": {"type": "string", "description": "The prompt's name."},
                        "arguments": {
                            "type": "object",
                            "additionalProperties": {"type": "string"},
                            "description": "The prompt's arguments.",
                        },
                    },
                    ["name"],
                ),
                get_prompt,
            ),
        }

    def register(
        self,
        caller: ConversableAgent | None = None,
        executor: ConversableAgent | None = None,
        *,
        prefix: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        resources_as_tools: bool = False,
        idempotent: bool | Iterable[str] | None = None,
        requires_approval: bool | Iterable[str] = False,
    ) -> list[str]:
        """Offer the servers' tools to ``caller``'s model and let ``executor`` run them (either
        may be omitted); ``prefix`` goes before each name, ``include``/``exclude`` pick tools by
        their server names. ``resources_as_tools`` adds ``read_resource`` and ``get_prompt``.
        ``requires_approval``: ``executor``'s human approves or rejects each call before it
        runs, of every tool (True) or of the tools named (by their server names).
        A name already registered on either agent is refused (:class:`MCPToolNameError`), before
        anything is registered. Returns the registered names.

        ``idempotent`` says which tools a resumed durable chat may simply run again when their
        call was unfinished (``parley.durable``); the others go to its ``on_uncertain_tool``
        policy. By default, the tools whose server marks them ``readOnlyHint`` or
        ``idempotentHint``; True or False: all of them; tool names (server names): those.
        Reading resources and prompts is always idempotent."""
        from ..agentchat._approval import mark as mark_for_approval
        from ..agentchat._tools import check_name

        repeatable = self._idempotence(idempotent)
        chosen = self._chosen(prefix, include, exclude, resources_as_tools, repeatable)
        approved = self._needing_approval(requires_approval, prefix, chosen)
        for name in chosen:
            check_name(name)
        if caller is not None:
            _refuse_taken(caller, chosen, _llm_tool_names(caller), "offered to the model of")
        if executor is not None:
            _refuse_taken(executor, chosen, set(executor.function_map), "executed by")
        for name, (description, parameters, function) in chosen.items():
            if caller is not None:
                schema = {
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": description,
                        "parameters": dict(parameters),
                    },
                }
                caller.update_tool_signature(schema, is_remove=False)
            if executor is not None:
                if name in approved:
                    mark_for_approval(function)
                executor.register_function({name: function})
        return list(chosen)

    def _needing_approval(
        self, requires_approval: bool | Iterable[str], prefix: str | None, chosen: Iterable[str]
    ) -> set[str]:
        """The registered names of the chosen tools that ``requires_approval`` names."""
        if isinstance(requires_approval, bool):
            return set(chosen) if requires_approval else set()
        names = self._named_tools("requires_approval", requires_approval)
        return {f"{prefix or ''}{n}" for n in names} & set(chosen)

    def register_for_llm(self, agent: ConversableAgent, **options: Any) -> list[str]:
        """AG2's name: offer the tools to ``agent``'s model (options as :meth:`register`)."""
        return self.register(caller=agent, **options)

    def register_for_execution(self, agent: ConversableAgent, **options: Any) -> list[str]:
        """AG2's name: let ``agent`` run the tools (options as :meth:`register`)."""
        return self.register(executor=agent, **options)


def _llm_tool_names(agent: ConversableAgent) -> set[str]:
    if not isinstance(agent.llm_config, dict):
        raise ValueError(
            f"agent {agent.name!r} has no llm_config: its model cannot be offered tools"
        )
    names = set()
    for schema in agent.llm_config.get("tools", []):
        function = schema.get("function") if isinstance(schema, dict) else None
        if isinstance(function, dict) and "name" in function:
            names.add(function["name"])
    return names


def _refuse_taken(
    agent: ConversableAgent, chosen: Mapping[str, tuple[Any, Any, Any]], taken: set[str], role: str
) -> None:
    for name, (_, _, function) in chosen.items():
        if name in taken:
            raise MCPToolNameError(
                function.__qualname__.split(".")[0],
                f"tool {function.__qualname__!r} cannot be registered as {name!r}: a function "
                f"named {name!r} is already {role} agent {agent.name!r}. Use prefix=, include= or "
                "exclude=.",
            )


def tool_from_sdk(server: str, tool: Any) -> MCPTool:
    """An :class:`MCPTool` from the SDK's ``Tool``."""
    hints = tool.annotations
    repeatable = bool(hints and (hints.read_only_hint or hints.idempotent_hint))
    return MCPTool(
        server=server,
        name=tool.name,
        description=tool.description or tool.title or tool.name,
        input_schema=tool.input_schema,
        repeatable=repeatable,
    )
