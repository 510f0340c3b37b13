"""Group chats (AutoGen's ``autogen.agentchat.groupchat``): ``GroupChat`` and ``GroupChatManager``.

``GroupChat`` (``_group_chat``) holds the participants, the shared transcript and the rules
for who speaks next; the selection itself is made by the speaker selector each group owns
(``_speaker_selection``, and ``_auto_selection`` for the "auto" method). The manager, the
agent that runs the rounds, is in ``_group_manager``. Both are re-exported here, their public
home. Data flows one way: the manager uses the group, the group its selector.

Differences from AutoGen, on purpose:

- ``append`` stores a copy: the caller's message dict is not modified. A message no model
  request could carry is refused (``InvalidMessageError``) and lone surrogates are repaired,
  as for every stored message (``_messages.check_message``); a content part of a type
  ``content_str`` does not know shows as ``<type>`` instead of raising.
- The transition graph is checked at construction and errors name the offending agent;
  templates with unknown ``{placeholders}`` are refused at construction, not at the first round.
- "auto" selection calls the model directly through one reusable private agent that shares the
  manager's client (AutoGen built two agents and a private chat per round), so selection
  costs appear in the manager's usage. Names the OpenAI API would refuse are sanitized in the
  ``name`` fields of selection requests only. Without ``select_speaker_prompt_template`` the
  last transcript message is not sent twice. A manager without an LLM makes "auto" behave as
  "round_robin", as in AutoGen, but that is logged (once) instead of silent.
- "manual" selection gives the human three tries, says truthfully that an empty answer lets
  the next agent in order speak, and that fallback respects the transition graph (and a
  method spelled "Manual" behaves like "manual").
- ``GroupChatManager.resume`` checks every saved message before it clears any history (and so
  does ``_valid_resume_messages``).
- ``GroupChatManager.run_chat`` registered as a reply function of another agent without
  ``config=groupchat`` raises a ``TypeError`` saying so.
- AutoGen's private selection steps (``_prepare_and_select_agents``, ``_validate_speaker_name``,
  ...) are faces over parley's selector (``_group_compat``); overrides of
  ``_prepare_and_select_agents``, ``_auto_select_speaker`` and ``a_auto_select_speaker`` are
  used by the rounds.
- ``visibility`` (a new keyword, default ``"all"``: AutoGen's behaviour) limits which messages
  each member receives (``_group_visibility``; website/docs/group-chat-visibility.md).
"""

from __future__ import annotations

from ._group_chat import GroupChat
from ._group_manager import GroupChatManager

__all__ = ["GroupChat", "GroupChatManager"]

# Their public home, as in AutoGen (reprs, pickles and docs name this module).
GroupChat.__module__ = __name__
GroupChatManager.__module__ = __name__
