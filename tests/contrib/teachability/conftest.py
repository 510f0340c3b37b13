"""The scripted model of the teachability tests."""

from __future__ import annotations

import pytest

from parley.testing import FakeLLMServer

from ._script import CAT, CITY, DOG, SUMS, TeachingModel


@pytest.fixture
def model(fake_llm: FakeLLMServer) -> TeachingModel:
    """Both models of a teachable chat, answering on ``fake_llm``."""
    responder = TeachingModel(facts=[DOG, CAT, CITY], tasks=[SUMS])
    fake_llm.responder = responder
    return responder
