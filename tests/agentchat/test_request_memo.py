"""The request memo builds exactly what ``request_messages`` builds, whatever the history does
between requests: grow, get edited in place, get cleared, hold templates or tool responses."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from parley.agentchat._messages import RequestMemo, request_messages

SYSTEM = [{"role": "system", "content": "You are terse."}]

_message = st.one_of(
    st.builds(
        lambda text, name: {"role": "user", "content": text, "name": name},
        st.text(max_size=8),
        st.sampled_from(["alice", "bob"]),
    ),
    st.builds(
        lambda text: {"role": "assistant", "content": text, "context": {"x": 1}},
        st.text(max_size=8),
    ),
    st.just(
        {
            "role": "tool",
            "content": "3",
            "tool_responses": [{"role": "tool", "tool_call_id": "c1", "content": "3"}],
        }
    ),
    st.builds(
        lambda n: {"role": "user", "content": [{"type": "text", "text": "n"}], "n": n},
        st.integers(),
    ),
)

# What happens to the history before the next request.
_step = st.one_of(
    st.tuples(st.just("append"), _message),
    st.tuples(st.just("edit"), st.text(max_size=8)),
    st.tuples(st.just("clear"), st.none()),
    st.tuples(st.just("system"), st.text(max_size=8)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_step, max_size=25))
def test_the_memo_matches_a_fresh_build_after_any_change(steps: list[tuple[str, Any]]) -> None:
    memo = RequestMemo()
    system = [dict(m) for m in SYSTEM]
    history: list[dict[str, Any]] = []
    for action, value in steps:
        if action == "append":
            history.append(dict(value))
        elif action == "edit" and history:
            history[len(history) // 2]["content"] = value  # in place, as user code may
        elif action == "clear":
            history.clear()
        elif action == "system":
            system[0]["content"] = value
        assert memo.build(system, history) == request_messages(system, history)


def test_a_template_is_filled_every_time() -> None:
    memo = RequestMemo()
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": lambda context: f"n={context['n']}", "context": {"n": 1}},
    ]
    assert memo.build(SYSTEM, history)[-1]["content"] == "n=1"
    history[1]["context"]["n"] = 2
    assert memo.build(SYSTEM, history)[-1]["content"] == "n=2"
