"""The ``fake_llm`` fixture as a user's test suite sees it."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_fixture_in_a_user_suite(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        'pytest_plugins = ["parley.testing.pytest_plugin"]'
    )  # explicit is harmless
    pytester.makepyfile(
        """
        import openai

        def test_uses_fake(fake_llm):
            fake_llm.add_reply("scripted")
            cfg = fake_llm.config_list()[0]
            c = openai.OpenAI(base_url=cfg["base_url"], api_key=cfg["api_key"])
            r = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
            c.close()
            assert r.choices[0].message.content == "scripted"

        def test_broken_responder_fails_the_test(fake_llm):
            def responder(req):
                raise ValueError("bug in the responder")
            fake_llm.responder = responder
            c = openai.OpenAI(base_url=fake_llm.base_url, api_key="k", max_retries=0)
            try:
                c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
            except openai.InternalServerError:
                pass
            c.close()
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)  # the teardown of the second test errors
    result.stdout.fnmatch_lines(
        ["*responder raised 1 time(s); first: ValueError*bug in the responder*"]
    )
