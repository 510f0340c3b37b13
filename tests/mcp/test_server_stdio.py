"""``parley mcp serve`` over stdio, driven by the official SDK's client."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from parley.testing import FakeLLMServer

from ._support import WAIT, run_serve, server_env, stdio_session
from .team import PIXEL

pytestmark = pytest.mark.timeout(240)


async def test_an_agents_functions_are_tools_with_their_schemas() -> None:
    async with stdio_session("calculator", None) as session:
        with anyio.fail_after(WAIT):
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == {"add", "divide"}
            assert tools["add"].description == "Add two integers."
            schema = tools["add"].input_schema
            assert schema["properties"]["a"] == {
                "type": "integer",
                "description": "the first number",
            }
            assert sorted(schema["required"]) == ["a", "b"]

            result = await session.call_tool("add", {"a": 2, "b": 40})
            assert not result.is_error
            assert result.content[0].text == "42"

            failed = await session.call_tool("divide", {"a": 1, "b": 0})
            assert failed.is_error
            assert "division by zero" in failed.content[0].text

            wrong = await session.call_tool("add", {"a": "two", "b": 1})
            assert wrong.is_error


async def test_a_function_returning_image_parts_answers_with_an_image_block() -> None:
    async with stdio_session("painter", None) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("paint", {"colour": "red"})
    assert not result.is_error
    text, image = result.content
    assert (text.type, text.text) == ("text", "a red pixel:")
    assert (image.type, image.mime_type, image.data) == ("image", "image/png", PIXEL)


async def test_a_group_chat_is_one_tool_answering_its_summary_with_progress() -> None:
    with FakeLLMServer() as llm:
        llm.add_reply("A haiku about rivers.")
        llm.add_reply("Reviewed: a fine haiku about rivers.")
        progress: list[tuple[float, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, message))

        async with stdio_session("team", llm) as session:
            with anyio.fail_after(WAIT):
                (tool,) = (await session.list_tools()).tools
                assert tool.name == "team"
                assert tool.description.startswith("Write a short text on a task")
                assert tool.input_schema["required"] == ["task"]

                result = await session.call_tool(
                    "team", {"task": "Write a haiku."}, progress_callback=on_progress
                )
        assert not result.is_error
        assert result.content[0].text == "Reviewed: a fine haiku about rivers."
        assert result.structured_content["summary"] == "Reviewed: a fine haiku about rivers."
        assert result.structured_content["messages"] == 3
        assert [v for v, _ in progress] == [1, 2, 3]
        messages = [m or "" for _, m in progress]
        assert messages[0].startswith("user -> chat_manager: Write a haiku.")
        assert messages[1].startswith("writer -> chat_manager: A haiku about rivers.")
        assert messages[2].startswith("critic -> chat_manager: Reviewed")
        # The task reached the model inside the group's history.
        assert any("Write a haiku." in str(m.get("content")) for m in llm.requests[0]["messages"])


async def test_cancelling_the_call_stops_the_chat() -> None:
    with FakeLLMServer() as llm:
        llm.add_reply("too late", delay=60)  # the writer's turn: the client gives up on it
        async with stdio_session("team", llm) as session:
            started = asyncio.Event()

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                started.set()

            call = asyncio.ensure_future(
                session.call_tool("team", {"task": "Write a poem."}, progress_callback=on_progress)
            )
            await asyncio.wait_for(started.wait(), WAIT)
            await asyncio.to_thread(llm.wait_for_requests, 1, WAIT)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            # The model call in flight was abandoned on the wire...
            await asyncio.to_thread(llm.wait_for_abandoned, 1, WAIT)
            # ...and the chat went no further: a new chat gets the next replies, in order.
            llm.add_reply("Second poem.")
            llm.add_reply("Reviewed second poem.")
            with anyio.fail_after(WAIT):
                result = await session.call_tool("team", {"task": "Another poem."})
            assert result.content[0].text == "Reviewed second poem."
            assert len(llm.requests) == 3
            assert "Another poem." in str(llm.requests[1]["messages"])


async def test_a_two_agent_chat_from_a_factory_with_initiate_chat_options() -> None:
    with FakeLLMServer() as llm:
        llm.add_reply("The answer.")
        async with stdio_session("pair", llm) as session:
            with anyio.fail_after(WAIT):
                result = await session.call_tool("pair", {"task": "Say it."})
                empty = await session.call_tool("pair", {"task": "  "})
        assert result.content[0].text == "The answer."
        assert result.structured_content["messages"] == 2  # max_turns=1 was passed on
        assert result.structured_content["termination_reason"] == "max_turns"
        assert empty.is_error
        assert len(llm.requests) == 1


def test_a_name_that_is_neither_an_agent_nor_a_chat_is_refused() -> None:
    done = run_serve("not_servable", env=server_env(None))
    assert done.returncode == 2
    assert "'not_servable' is a int" in done.stderr


async def test_serving_functions_that_need_approval_over_stdio_without_a_review_is_refused() -> (
    None
):
    from parley import UserProxyAgent
    from parley.mcp import a_serve

    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)

    @user.register_for_execution(requires_approval=True)
    def delete_file(path: str) -> str:
        return "deleted"

    with pytest.raises(ValueError, match=r"\['delete_file'\] need a human's approval"):
        await a_serve(user, transport="stdio")


async def test_sequential_chats_answer_the_last_summary_with_progress_for_each_chat() -> None:
    with FakeLLMServer() as llm:
        llm.add_reply("Draft: rivers run.")
        llm.add_reply("Edited: rivers run far.")
        progress: list[tuple[float, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, message))

        async with stdio_session("steps", llm) as session:
            with anyio.fail_after(WAIT):
                (tool,) = (await session.list_tools()).tools
                assert tool.name == "steps"
                result = await session.call_tool(
                    "steps", {"task": "Write about rivers."}, progress_callback=on_progress
                )
        assert not result.is_error
        assert result.content[0].text == "Edited: rivers run far."
        assert result.structured_content["summary"] == "Edited: rivers run far."
        assert result.structured_content["messages"] == 4  # two messages in each chat
        assert [v for v, _ in progress] == [1, 2, 3, 4]
        lines = [m or "" for _, m in progress]
        assert lines[0] == "user -> drafter: Write about rivers."
        assert lines[1] == "drafter -> user: Draft: rivers run."
        assert lines[2].startswith("user -> editor: Edit the draft.")
        assert lines[3] == "editor -> user: Edited: rivers run far."
        # The first chat's summary was carried over into the second chat's task.
        assert "Draft: rivers run." in str(llm.requests[1]["messages"])
