"""What a tuning run learns about cost (pure: no requests)."""

from __future__ import annotations

import json
import math

import pytest

from parley.oai.legacy._tune_prune import PruneState, sample_margin, target_output_tokens


def test_the_margin_shrinks_with_the_sample_and_vanishes_on_the_whole_data() -> None:
    margins = [sample_margin(k, 64) for k in (1, 2, 4, 8, 16, 32, 48, 63)]
    assert margins == sorted(margins, reverse=True)
    assert margins[0] == pytest.approx(0.1)  # one instance: the full 10 %
    assert sample_margin(64, 64) == 0.0
    assert sample_margin(1, 1) == 0.0


def test_target_output_tokens() -> None:
    # 0.01 USD per instance; 1000 input tokens at 0.0015 / 1k; output at 0.002 / 1k.
    assert target_output_tokens(0.01, 1000, (0.0015, 0.002)) == pytest.approx(4250)
    assert target_output_tokens(0.001, 1000, (0.0015, 0.002)) < 0
    assert target_output_tokens(0.01, 10, (0.001, 0.0)) == math.inf


def test_proofs_carry_over_max_tokens_in_the_safe_direction() -> None:
    state = PruneState()
    region = ("gpt-4", 0, None)
    state.mark_valid(region, 200, 8)
    state.mark_invalid(region, 100, 32)
    # Valid at 200 tokens holds for fewer tokens, not for more.
    assert state.largest_valid(region, 150) == 8
    assert state.largest_valid(region, 300) == 0
    # Invalid at 100 tokens holds for more tokens, not for fewer.
    assert state.smallest_invalid(region, 150) == 32
    assert state.smallest_invalid(region, 50) is None
    # Other regions know nothing.
    assert state.largest_valid(("gpt-4", 1, None), 10) == 0
    # Proofs only get stronger.
    state.mark_valid(region, 200, 4)
    state.mark_invalid(region, 100, 64)
    assert state.largest_valid(region, 200) == 8
    assert state.smallest_invalid(region, 100) == 32


def test_snapshot_round_trips_through_json() -> None:
    state = PruneState(total_cost=0.125)
    state.mark_valid(("gpt-4", 0, 1), math.inf, 4)
    state.mark_invalid(("gpt-3.5-turbo", None, None), 16, 9)
    state.input_tokens[("gpt-4", 0)] = 42.5
    restored = PruneState.restore(json.loads(json.dumps(state.snapshot())))
    assert restored == state
