"""A chat in which the model is told about user functions and its code imports one of them."""

from __future__ import annotations

from pathlib import Path

from parley import AssistantAgent, UserProxyAgent
from parley.coding import LocalCommandLineCodeExecutor, with_requirements
from parley.testing import FakeLLMServer


@with_requirements(global_imports=["statistics"])
def spread(values: list[float]) -> float:
    """The sample standard deviation of the values."""
    return round(statistics.stdev(values), 3)  # type: ignore[name-defined]  # noqa: F821


def test_the_models_code_calls_a_user_function(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(
        work_dir=tmp_path, timeout=20, functions=[spread], functions_module="tools"
    )
    fake_llm.add_reply(
        "I will use the function.\n```python\nfrom tools import spread\n"
        "print('spread:', spread([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]))\n```"
    )
    fake_llm.add_reply("The spread is 2.138. TERMINATE")
    assistant = AssistantAgent(
        "assistant",
        system_message="You write Python.\n\n" + executor.format_functions_for_prompt(),
        llm_config=fake_llm.llm_config(),
    )
    proxy = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"executor": executor},
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    result = proxy.initiate_chat(assistant, message="How spread out are my numbers?", silent=True)

    system = fake_llm.requests[0]["messages"][0]["content"]
    assert "from tools import foo" in system
    assert (
        'def spread(values: list[float]) -> float:\n    """The sample standard deviation' in system
    )
    # The function ran in the code's process and its result reached the model.
    last = fake_llm.requests[1]["messages"][-1]
    assert last["role"] == "user"
    assert last["content"] == "exitcode: 0 (execution succeeded)\nCode output: spread: 2.138\n"
    assert result.summary.strip() == "The spread is 2.138."
