"""MathChat's code rewriting: invariants over generated Python snippets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from parley.agentchat.contrib.math_user_proxy_agent import _add_print_to_last_line, _remove_print

names = st.sampled_from(["x", "y", "total"])
simple = st.one_of(
    names.map(lambda n: f"{n} = 1"),
    names.map(lambda n: f"print({n} if False else 0)"),
    st.just("pass"),
)
block = st.lists(simple, min_size=1, max_size=4).map(
    lambda body: "for i in range(2):\n" + "\n".join("    " + line for line in body)
)
program = st.lists(st.one_of(simple, block), min_size=1, max_size=5).map("\n".join)


@given(program)
def test_removing_prints_keeps_code_valid(code: str) -> None:
    compile(code, "<q>", "exec")
    stripped = _remove_print(code)
    compile(stripped, "<q>", "exec")
    # Top-level prints go; those inside a block stay, as in AutoGen.
    assert not any(line.startswith("print(") for line in stripped.splitlines())
    assert stripped.count("    print(") == code.count("    print(")


@given(program)
def test_adding_a_print_keeps_code_valid(code: str) -> None:
    rewritten = _add_print_to_last_line(code)
    compile(rewritten, "<q>", "exec")
    if "print(" in code:
        assert rewritten == code
