"""optimize() on the fake server: a rewrite kept when the score improves and refused when it
does not, with a function judge and with LLMJudge; what the optimiser is shown; rewrites that
break placeholders; the arguments' checks; concurrent runs kept apart."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from parley.agents import LLMJudge, PromptVersion, TagAgent, TagPrompts, optimize
from parley.agents.optimization import Transcript, a_optimize
from parley.testing import FakeLLMServer

pytestmark = pytest.mark.timeout(60)

OPTIMIZER = "You improve the prompts"
JUDGE = "You grade the work"
FRENCH = '<PROMPT name="manifesto">You are {name}. Always answer in French.</PROMPT>'
TASKS = ["Greet Ann.", "Greet Bob."]


def system_of(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def user_of(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


def greeter(optimizer_answers: list[str]) -> Callable[[dict[str, Any]], Any]:
    """The agent greets in French once its manifesto says so; the optimiser answers in turn."""
    answers = iter(optimizer_answers)

    def respond(request: dict[str, Any]) -> Any:
        system = system_of(request)
        if system.startswith(OPTIMIZER):
            return next(answers)
        word = "bonjour" if "French" in system else "hello"
        return f"<TOOL: END_RUN>{word}</TOOL>"

    return respond


def in_french(task: str, transcript: Transcript) -> float:
    return 1.0 if "bonjour" in transcript.reply else 0.0


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server
        assert server.errors == []


def agent_on(server: FakeLLMServer, **kwargs: Any) -> TagAgent:
    return TagAgent("greeter", llm_config={"config_list": server.config_list()}, **kwargs)


def optimizer_requests(server: FakeLLMServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if system_of(r).startswith(OPTIMIZER)]


def agent_requests(server: FakeLLMServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if not system_of(r).startswith(OPTIMIZER)]


def summary(history: list[PromptVersion]) -> list[tuple[int, float | None, bool, tuple[str, ...]]]:
    return [(v.round, v.mean_score, v.accepted, v.changed) for v in history]


def test_a_rewrite_that_raises_the_score_is_kept(server: FakeLLMServer) -> None:
    server.responder = greeter(
        [f'They should speak French.\n{FRENCH}\n<PROMPT name="x">?</PROMPT>']
    )
    agent = agent_on(server)
    original = agent.prompts

    history = optimize(agent, TASKS, in_french, rounds=1)

    assert summary(history) == [(0, 0.0, True, ()), (1, 1.0, True, ("manifesto",))]
    assert history[0].prompts == original
    assert history[0].scores == (0.0, 0.0)
    assert history[1].scores == (1.0, 1.0)
    assert history[1].proposed == {"manifesto": "You are {name}. Always answer in French."}
    assert history[1].optimizer_text.startswith("They should speak French.")
    assert [t.reply for t in history[1].transcripts] == ["bonjour", "bonjour"]
    # The agent ends holding the better prompts, and its next run uses them.
    assert agent.prompts.manifesto == "You are {name}. Always answer in French."
    assert agent.prompts.task == original.task
    assert agent.run("Greet Cy.") == "bonjour"
    assert agent.memory[0]["content"].startswith("Your task:\nGreet Cy.")


def test_the_optimiser_is_shown_the_prompts_and_the_worst_transcripts(
    server: FakeLLMServer,
) -> None:
    server.responder = greeter([FRENCH])
    agent = agent_on(server)

    optimize(agent, TASKS, in_french, rounds=1)

    (request,) = optimizer_requests(server)
    assert system_of(request).startswith(OPTIMIZER)
    shown = user_of(request)
    for task in TASKS:
        assert f"Task: {task}" in shown
    assert "### Run 1: score 0" in shown
    assert "### Run 2: score 0" in shown
    assert "[assistant]\n<TOOL: END_RUN>hello</TOOL>" in shown
    assert "Final reply: hello" in shown
    assert '<PROMPT name="manifesto">\nYou are {name}.' in shown
    assert "Prompt task (must contain {task})" in shown
    assert '<PROMPT name="NAME">the new text</PROMPT>' in shown


def test_only_the_worst_k_transcripts_are_shown(server: FakeLLMServer) -> None:
    server.responder = greeter(["no change"])
    scores = {"Task alpha": 3.0, "Task beta": 1.0, "Task gamma": 2.0}
    agent = agent_on(server)

    history = optimize(agent, list(scores), lambda task, _: scores[task], rounds=1, worst_k=1)

    shown = user_of(optimizer_requests(server)[0])
    assert "Task: Task beta" in shown
    assert "Task alpha" not in shown
    assert "Task gamma" not in shown
    assert history[0].scores == (3.0, 1.0, 2.0)
    assert history[0].mean_score == 2.0
    assert summary(history)[1] == (1, None, False, ())
    assert history[1].note == "the optimiser changed no prompt"


def test_a_rewrite_that_does_not_raise_the_score_is_refused(server: FakeLLMServer) -> None:
    brief = '<PROMPT name="manifesto">You are {name}. Be brief.</PROMPT>'
    server.responder = greeter([brief, FRENCH])
    agent = agent_on(server)
    original = agent.prompts

    history = optimize(agent, TASKS, in_french, rounds=1)

    assert summary(history) == [(0, 0.0, True, ()), (1, 0.0, False, ("manifesto",))]
    assert history[1].note == "not kept: mean 0 <= best 0"
    assert history[1].prompts.manifesto == "You are {name}. Be brief."
    assert agent.prompts == original

    # A second call starts from the kept prompts; round 2 of a longer run, too, is shown the
    # transcripts of the best version so far.
    server.responder = greeter([brief, FRENCH])
    history = optimize(agent, TASKS, in_french, rounds=2)
    assert summary(history) == [
        (0, 0.0, True, ()),
        (1, 0.0, False, ("manifesto",)),
        (2, 1.0, True, ("manifesto",)),
    ]
    last = optimizer_requests(server)[-1]
    assert "You are {name}. Be brief." not in user_of(last)
    assert "Final reply: hello" in user_of(last)


def test_a_rewrite_that_breaks_a_placeholder_is_recorded_and_not_run(
    server: FakeLLMServer,
) -> None:
    server.responder = greeter(['<PROMPT name="task">Do it.</PROMPT>'])
    agent = agent_on(server)

    history = optimize(agent, TASKS, in_french, rounds=1)

    refused = history[1]
    assert (refused.accepted, refused.mean_score, refused.scores) == (False, None, ())
    assert refused.note.startswith("refused, not run: TagPrompts.task must contain the placeholder")
    assert refused.proposed == {"task": "Do it."}
    assert refused.prompts == agent.prompts
    assert len(agent_requests(server)) == len(TASKS)  # the baseline only


def test_only_the_named_prompts_are_rewritten(server: FakeLLMServer) -> None:
    task = '<PROMPT name="task">Task for you: {task}</PROMPT>'
    server.responder = greeter([FRENCH + task])
    agent = agent_on(server)

    history = optimize(agent, TASKS, in_french, rounds=1, prompts_to_rewrite=["task"])

    shown = user_of(optimizer_requests(server)[0])
    assert 'name="task"' in shown
    assert 'name="manifesto"' not in shown
    assert history[1].proposed == {"task": "Task for you: {task}"}
    assert history[1].changed == ("task",)
    assert history[1].accepted is False  # still "hello": the manifesto was not touched
    assert agent_requests(server)[-1]["messages"][1]["content"] == "Task for you: Greet Bob."


async def test_async_judges_and_the_async_face(server: FakeLLMServer) -> None:
    server.responder = greeter([FRENCH])
    agent = agent_on(server)

    async def judge(task: str, transcript: Transcript) -> float:
        return 10.0 if transcript.reply == "bonjour" else 2.5

    history = await a_optimize(agent, TASKS, judge, rounds=1)
    assert [v.mean_score for v in history] == [2.5, 10.0]


# -- the LLM judge ---------------------------------------------------------------------------


def test_an_llm_judge_scores_the_transcripts(server: FakeLLMServer) -> None:
    server.responder = greeter([FRENCH])
    agent = agent_on(server)
    with FakeLLMServer() as judge_server:
        judge_server.responder = lambda r: (
            "Greets in French as asked.\nSCORE: 9"
            if "bonjour" in user_of(r)
            else "It answered in English.\n**Score:** 2"
        )
        judge = LLMJudge(
            {"config_list": judge_server.config_list(price=[1.0, 1.0])},
            rubric="Greetings must be in French.",
        )

        history = optimize(agent, TASKS, judge, rounds=1)

        assert [(v.mean_score, v.accepted) for v in history] == [(2.0, True), (9.0, True)]
        first = judge_server.requests[0]["messages"]
        assert first[0]["content"].startswith(JUDGE)
        assert "Rubric: Greetings must be in French." in first[0]["content"]
        assert "Task:\nGreet Ann." in first[1]["content"]
        assert "Its final reply:\nhello" in first[1]["content"]
        assert len(judge_server.requests) == 4
    usage = judge.agent.get_total_usage()
    assert usage is not None
    assert usage["total_cost"] > 0


def test_an_llm_judge_asks_again_for_a_missing_score_then_gives_up(
    server: FakeLLMServer,
) -> None:
    server.responder = greeter([])
    agent = agent_on(server)
    with FakeLLMServer() as judge_server:
        judge_server.add_reply("Looks fine to me.").add_reply("SCORE: 6")
        judge_server.add_reply("Fine.").add_reply("Really fine.")
        judge = LLMJudge({"config_list": judge_server.config_list()}, max_attempts=2)

        with pytest.raises(RuntimeError, match=r"no 'SCORE: <n>' line .* in 2 answer\(s\)"):
            optimize(agent, TASKS, judge, rounds=0)

        retry = judge_server.requests[1]["messages"]
        assert retry[-2] == {"role": "assistant", "content": "Looks fine to me."}
        assert "no valid score line" in retry[-1]["content"]
        assert len(judge_server.requests) == 4


# -- costs, concurrency, arguments --------------------------------------------------------------


def test_an_optimiser_of_its_own_reports_its_cost(server: FakeLLMServer) -> None:
    server.responder = greeter([])
    agent = agent_on(server)
    with FakeLLMServer() as optimizer_server:
        optimizer_server.add_reply(FRENCH)
        history = optimize(
            agent,
            TASKS,
            in_french,
            rounds=1,
            optimizer_llm_config={"config_list": optimizer_server.config_list(price=[1.0, 2.0])},
        )
        assert user_of(optimizer_server.requests[0]).startswith("## The agent's prompts")
    assert optimizer_requests(server) == []
    assert history[1].accepted
    assert history[1].optimizer_cost > 0
    assert history[0].optimizer_cost == 0


def test_concurrent_runs_keep_their_transcripts_apart(server: FakeLLMServer) -> None:
    def respond(request: dict[str, Any]) -> Any:
        messages = request["messages"]
        task = str(messages[1]["content"]).split("\n")[1]
        if len(messages) == 2:
            return {"content": f"<TOOL: ECHO>{task}</TOOL>", "delay": 0.3}
        return f"<TOOL: END_RUN>{task}</TOOL>"

    server.responder = respond
    tasks = ["Task one", "Task two", "Task three"]
    agent = agent_on(server, tools={"ECHO": lambda text: text})

    history = optimize(
        agent, tasks, lambda task, t: float(t.reply == task), rounds=0, concurrency=3
    )

    assert history[0].scores == (1.0, 1.0, 1.0)
    for task, transcript in zip(tasks, history[0].transcripts, strict=True):
        assert transcript.task == task
        assert all(other not in transcript.text() for other in tasks if other != task)
    # All three runs were under way before any got its first answer.
    assert all(len(r["messages"]) == 2 for r in server.requests[:3])
    assert agent.memory == []  # optimisation runs do not touch the agent's memory


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tasks": "Greet Ann."}, TypeError, "tasks must be a list"),
        ({"tasks": []}, ValueError, "non-empty list of strings"),
        ({"judge": 3}, TypeError, "judge must be a function"),
        ({"rounds": -1}, ValueError, "rounds must be an int of at least 0"),
        ({"worst_k": 0}, ValueError, "worst_k must be an int of at least 1"),
        ({"concurrency": 0}, ValueError, "concurrency must be an int of at least 1"),
        ({"prompts_to_rewrite": ["mission"]}, ValueError, "must name some of the prompts"),
        ({"prompts_to_rewrite": "task"}, TypeError, r"e.g. \['task'\]"),
    ],
)
def test_mistakes_in_the_arguments_are_refused_before_any_request(
    server: FakeLLMServer, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    arguments: dict[str, Any] = {"tasks": TASKS, "judge": in_french, **kwargs}
    with pytest.raises(error, match=match):
        optimize(agent_on(server), **arguments)
    assert server.requests == []


def test_a_judge_must_return_a_number(server: FakeLLMServer) -> None:
    server.responder = greeter([])
    with pytest.raises(TypeError, match="it must return a number"):
        optimize(agent_on(server), TASKS, lambda task, t: "good", rounds=0)


def test_optimize_needs_a_tag_agent() -> None:
    with pytest.raises(TypeError, match="improves a TagAgent's prompts"):
        optimize(object(), TASKS, in_french)  # type: ignore[arg-type]


def test_prompt_versions_are_frozen() -> None:
    version = PromptVersion(0, TagPrompts(), (1.0,), 1.0, True)
    with pytest.raises(AttributeError):
        version.accepted = False  # type: ignore[misc]


def test_optimize_is_the_function_whatever_was_imported_first() -> None:
    import parley.agents.optimization
    from parley import agents

    assert agents.optimize is parley.agents.optimization.optimize
    assert agents.LLMJudge is LLMJudge
