"""IOScripted: playing the human from a script."""

from __future__ import annotations

import pickle
import threading

import pytest

from parley.io import InputExhaustedError, IOScripted, IOStream


def test_records_prints() -> None:
    io = IOScripted()
    io.print("hello", "world")
    io.print(1, 2, sep=", ", end="")
    io.print()
    assert io.printed == ["hello world\n", "1, 2", "\n"]
    assert io.text == "hello world\n1, 2\n"


def test_answers_from_replies_in_order_and_records_prompts() -> None:
    io = IOScripted(["yes", "", "exit"])
    assert io.input("Continue? ") == "yes"
    assert io.input() == ""
    assert io.remaining == ["exit"]
    assert io.input("Feedback: ", password=True) == "exit"
    assert io.prompts == ["Continue? ", "", "Feedback: "]
    assert io.remaining == []
    assert io.text == ""  # prompts are not part of the printed text


def test_running_out_raises_a_clear_error_naming_the_prompt() -> None:
    io = IOScripted(["only one"])
    io.input("first: ")
    with pytest.raises(InputExhaustedError, match=r"no reply left for the input prompt 'second: '"):
        io.input("second: ")
    with pytest.raises(EOFError) as info:
        IOScripted().input("Provide feedback to assistant: ")
    assert isinstance(info.value, InputExhaustedError)
    assert info.value.prompt == "Provide feedback to assistant: "


def test_exhausted_error_survives_pickling() -> None:
    err = InputExhaustedError("p> ", 2)
    copy = pickle.loads(pickle.dumps(err))
    assert (type(copy), copy.prompt, str(copy)) == (InputExhaustedError, "p> ", str(err))


def test_callable_answers_every_prompt() -> None:
    asked: list[str] = []

    def human(prompt: str) -> str:
        asked.append(prompt)
        return "exit" if "again" in prompt else "ok"

    io = IOScripted(human)
    assert io.input("first") == "ok"
    assert io.input("again") == "exit"
    assert asked == ["first", "again"]


def test_queued_replies_come_before_the_callable() -> None:
    io = IOScripted(lambda prompt: "from fn")
    io.add_replies("queued 1", "queued 2")
    assert [io.input() for _ in range(3)] == ["queued 1", "queued 2", "from fn"]


def test_add_replies_refills_a_used_up_script() -> None:
    io = IOScripted(["a"])
    assert io.input() == "a"
    io.add_replies("b")
    assert io.input() == "b"


def test_callable_returning_non_string_is_reported() -> None:
    io = IOScripted(lambda prompt: None)  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match=r"must return a str, returned NoneType for the prompt 'q'"):
        io.input("q")


def test_callable_may_print_to_the_same_stream() -> None:
    io: IOScripted

    def human(prompt: str) -> str:
        io.print("thinking about", prompt)
        return "done"

    io = IOScripted(human)
    assert io.input("task") == "done"
    assert io.text == "thinking about task\n"


@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        ("exit", r"got str; for a single reply write IOScripted\(\['exit'\]\)"),
        (iter(["a"]), r"list of strings or a callable .* got list_iterator"),
        (42, r"got int"),
        (["ok", 3], r"replies must be strings; reply 1 is int 3"),
    ],
)
def test_bad_replies_are_rejected(replies: object, expected: str) -> None:
    with pytest.raises(TypeError, match=expected):
        IOScripted(replies)  # type: ignore[arg-type]


def test_bad_echo_is_rejected() -> None:
    with pytest.raises(TypeError, match=r"echo must be an output stream .* got str"):
        IOScripted(echo="stdout")  # type: ignore[arg-type]


def test_echo_shows_prints_prompts_and_answers_but_hides_passwords(
    capsys: pytest.CaptureFixture[str],
) -> None:
    io = IOScripted(["fine", "hunter2"], echo=IOStream.get_global_default())
    io.print("a", "b", sep="+")
    io.input("How are you? ")
    io.input("Password: ", password=True)
    assert capsys.readouterr().out == "a+b\nHow are you? fine\nPassword: \n"
    assert io.text == "a+b\n"


def test_clear_forgets_output_but_keeps_replies() -> None:
    io = IOScripted(["a", "b"])
    io.print("x")
    io.input("p")
    io.clear()
    assert (io.printed, io.prompts, io.remaining) == ([], [], ["b"])


def test_recording_is_thread_safe() -> None:
    io = IOScripted([str(i) for i in range(800)])
    answers: list[str] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        for i in range(200):
            io.print(name, i)
            answer = io.input(f"{name}?")
            with lock:
                answers.append(answer)

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(io.printed) == 800
    assert sorted(answers, key=int) == [str(i) for i in range(800)]
    assert io.remaining == []
    for n in range(4):
        mine = [line for line in io.printed if line.startswith(f"t{n} ")]
        assert mine == [f"t{n} {i}\n" for i in range(200)]


def test_works_as_the_default_stream() -> None:
    with IOStream.set_default(IOScripted(["42"])) as io:
        stream = IOStream.get_default()
        stream.print("Question:", "meaning?")
        answer = stream.input("> ")
    assert answer == "42"
    assert io.text == "Question: meaning?\n"
    assert io.prompts == ["> "]


def test_async_reply_function_is_rejected() -> None:
    async def human(prompt: str) -> str:
        return "never"

    with pytest.raises(TypeError, match="must be a plain function, not async"):
        IOScripted(human)  # type: ignore[arg-type]


def test_callable_returning_a_coroutine_is_reported_without_warnings() -> None:
    async def later() -> str:
        return "never"

    io = IOScripted(lambda prompt: later())  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="returned coroutine"):
        io.input("q")
