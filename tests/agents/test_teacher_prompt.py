"""The teacher's system prompt: the template and the session's graph block; turns running
at once on the same inputs share one rendered copy, and none outlives the turns."""

from __future__ import annotations

import gc
import weakref

from backend.agent.teacher import TEMPLATE_ID, load_template, render_system_prompt


def test_the_same_block_renders_the_very_same_prompt_and_a_new_block_a_new_one():
    block = "- fractions: a part of a whole (mastered)\n"
    first = render_system_prompt(block)
    assert render_system_prompt("".join(list(block))) is first  # equal block: one copy
    assert first.template_id == TEMPLATE_ID
    assert first.text.startswith(load_template().rstrip()) and block.strip() in first.text
    other = render_system_prompt("- photosynthesis: light to sugar\n")
    assert other is not first and "photosynthesis" in other.text
    custom = render_system_prompt(block, "You are a terse tutor.")
    assert (
        custom.text.startswith("You are a terse tutor.")
        and custom.template_hash != first.template_hash
    )


def test_no_rendered_prompt_is_kept_once_no_turn_holds_it():
    block = "".join(["- gravity: ", "masses attract (mastered)\n"])  # a fresh string
    first = render_system_prompt(block)
    gone = weakref.ref(first)
    del first
    gc.collect()
    assert gone() is None  # a session between turns holds only its block
    again = render_system_prompt(block)
    assert again.text.endswith("masses attract (mastered)\n")
