"""``Teachability`` (AutoGen's ``autogen.agentchat.contrib.capabilities.teachability``).

Lets an agent remember what users teach it, across chats and processes::

    teachability = Teachability(path_to_db_dir="./tmp/teachable_agent_db")
    teachability.add_to_agent(assistant)

Each message the agent receives is read by a :class:`TextAnalyzerAgent` on the agent's model:
advice for a kind of task is kept as a (general task -> advice) memo, a fact as a
(question -> fact) memo, in a :class:`MemoStore` under ``path_to_db_dir``. When a later message
is near a memo's input text, the memo's output text is appended to the message under
``# Memories that might help`` before the agent's model sees it.

Differences from AutoGen 0.2, each a fix:

* the hook works in async chats too (AutoGen's sync-only hooks did nothing under
  ``a_initiate_chat``), and blocking work (embedding, disk) runs in a worker thread;
* the memories change what the model sees, not the agent's stored history;
* the agent's conversation with the analyzer holds one analysis, not every analysis ever made;
* recalled memos keep their nearest-first order (AutoGen's ``set`` shuffled them);
* chats running at once on one agent take turns with the analyzer (per event loop);
* multimodal messages are analysed by their text (AutoGen raised ``TypeError``);
* an analyzer that returns nothing counts as "no" (AutoGen read its own instructions back);
* messages go to the current ``IOStream``, not bare ``print``; the store is a
  :mod:`parley.memory` index and a JSON side table (see :mod:`._memo_store`), not ChromaDB
  and a pickle.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from ...._core.runtime import run_in_thread
from ....formatting_utils import colored
from ..._sync_chat import run_sync
from ._memo_store import MemoStore
from .agent_capability import AgentCapability

__all__ = ["MemoStore", "Teachability"]

_YELLOW = "light_yellow"
MEMORY_HEADER = "\n# Memories that might help\n"

_IS_TASK = (
    "Does any part of the TEXT ask the agent to perform a task or solve a problem? "
    "Answer with just one word, yes or no."
)
_ADVICE = (
    "Briefly copy any advice from the TEXT that may be useful for a similar but different task "
    "in the future. But if no advice is present, just respond with 'none'."
)
_TASK = (
    "Briefly copy just the task from the TEXT, then stop. Don't solve it, and don't include any "
    "advice."
)
_GENERAL_TASK = (
    "Summarize very briefly, in general terms, the type of task described in the TEXT. Leave "
    "out details that might not appear in a similar problem."
)
_HAS_INFO = (
    "Does the TEXT contain information that could be committed to memory? Answer with just one "
    "word, yes or no."
)
_QUESTION = (
    "Imagine that the user forgot this information in the TEXT. How would they ask you for "
    "this information? Include no other text in your response."
)
_INFO = "Copy the information from the TEXT that should be committed to memory. Add no explanation."
_SYSTEM_NOTE = "You've been given the ability to remember user teachings from prior conversations."


def _say(text: str) -> None:
    from ....io import IOStream  # the console only once something is said

    IOStream.get_default().print(colored(text, _YELLOW), flush=True)


class Teachability(AgentCapability):
    """Teach an agent facts and advice that it recalls in later chats.

    Args:
        verbosity: 0 basic messages; 1 also the memory operations; 2 also the analyzer's
            conversation; 3 also every memo after each change.
        reset_db: start with an empty memory (clears ``path_to_db_dir``).
        path_to_db_dir: where the memos are kept (created if missing).
        recall_threshold: recall memos whose distance to the message is below this (squared
            distance between unit vectors, 0 to 4; 1.5 is a cosine above 0.25).
        max_num_retrievals: recall at most this many memos per lookup.
        llm_config: the analyzer's model; the agent's own when None.

    The store is opened at once, before :meth:`add_to_agent`.
    """

    def __init__(
        self,
        verbosity: int | None = 0,
        reset_db: bool | None = False,
        path_to_db_dir: str | None = "./tmp/teachable_agent_db",
        recall_threshold: float | None = 1.5,
        max_num_retrievals: int | None = 10,
        llm_config: dict[str, Any] | bool | None = None,
    ) -> None:
        super().__init__()
        self.verbosity = verbosity or 0
        self.path_to_db_dir = path_to_db_dir
        self.recall_threshold = 1.5 if recall_threshold is None else recall_threshold
        self.max_num_retrievals = 10 if max_num_retrievals is None else max_num_retrievals
        self.llm_config = llm_config
        self.analyzer: Any = None
        self.teachable_agent: Any = None
        self.memo_store = MemoStore(self.verbosity, reset_db, path_to_db_dir)
        # One analysis at a time per event loop: chats running at once on one agent share the
        # analyzer, whose conversation must hold exactly one text and its instructions.
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def add_to_agent(self, agent: Any) -> None:
        """Make ``agent`` teachable: a hook on the messages it receives, an analyzer on its
        model (or ``llm_config``), and a sentence added to its system message."""
        from ..text_analyzer_agent import TextAnalyzerAgent

        self.teachable_agent = agent
        agent.register_hook("a_process_last_received_message", self.a_process_last_received_message)
        if self.llm_config is None:
            self.llm_config = agent.llm_config
        assert self.llm_config, "Teachability requires a valid llm_config."
        config = self.llm_config if isinstance(self.llm_config, dict) else None
        self.analyzer = TextAnalyzerAgent(llm_config=config)
        agent.update_system_message(agent.system_message + "\n" + _SYSTEM_NOTE)

    def prepopulate_db(self) -> None:
        """Add ten example memos to the store."""
        self.memo_store.prepopulate()

    # -- the hook --------------------------------------------------------------------------

    async def a_process_last_received_message(self, text: Any) -> Any:
        """The hook: ``text`` with any memories recalled for it appended; memorable parts of
        ``text`` are stored. Multimodal (list) content is read by its text parts and gets the
        memories as one more text part (AutoGen raised a ``TypeError`` on it once the store
        held memos)."""
        if self.teachable_agent is None:
            raise RuntimeError("add the Teachability to an agent first (add_to_agent)")
        plain = _text_of(text)
        expanded = text
        if self.memo_store.last_memo_id > 0:
            memos = await self._consider_memo_retrieval(plain)
            if isinstance(text, str):
                expanded = text + self._concatenate_memo_texts(memos)
            elif memos:
                extra = self._concatenate_memo_texts(memos)
                expanded = [*text, {"type": "text", "text": extra}]
        await self._consider_memo_storage(plain)
        return expanded

    def process_last_received_message(self, text: Any) -> Any:
        """The sync face of :meth:`a_process_last_received_message`."""
        return run_sync(self.a_process_last_received_message(text))

    # -- storage and retrieval ---------------------------------------------------------------

    async def _consider_memo_storage(self, comment: str) -> None:
        """Store the advice and the information ``comment`` holds, if any."""
        if _says("yes", await self._analyze(comment, _IS_TASK)):
            advice = await self._analyze(comment, _ADVICE)
            if not _says("none", advice):
                task = await self._analyze(comment, _TASK)
                general_task = await self._analyze(task, _GENERAL_TASK)
                if self.verbosity >= 1:
                    _say("\nREMEMBER THIS TASK-ADVICE PAIR")
                await run_in_thread(self.memo_store.add_input_output_pair, general_task, advice)
        if _says("yes", await self._analyze(comment, _HAS_INFO)):
            question = await self._analyze(comment, _QUESTION)
            answer = await self._analyze(comment, _INFO)
            if self.verbosity >= 1:
                _say("\nREMEMBER THIS QUESTION-ANSWER PAIR")
            await run_in_thread(self.memo_store.add_input_output_pair, question, answer)

    async def _consider_memo_retrieval(self, comment: str) -> list[str]:
        """The output texts of the memos near ``comment`` or near the task it asks for."""
        if self.verbosity >= 1:
            _say("\nLOOK FOR RELEVANT MEMOS, AS QUESTION-ANSWER PAIRS")
        memos = await self._retrieve_relevant_memos(comment)
        if _says("yes", await self._analyze(comment, _IS_TASK)):
            if self.verbosity >= 1:
                _say("\nLOOK FOR RELEVANT MEMOS, AS TASK-ADVICE PAIRS")
            task = await self._analyze(comment, _TASK)
            general_task = await self._analyze(task, _GENERAL_TASK)
            memos.extend(await self._retrieve_relevant_memos(general_task))
        return list(dict.fromkeys(memos))

    async def _retrieve_relevant_memos(self, input_text: str) -> list[str]:
        found = await run_in_thread(
            self.memo_store.get_related_memos,
            input_text,
            self.max_num_retrievals,
            self.recall_threshold,
        )
        if self.verbosity >= 1 and not found:
            _say("\nTHE CLOSEST MEMO IS BEYOND THE THRESHOLD:")
            await run_in_thread(self.memo_store.get_nearest_memo, input_text)
        return [output_text for _, output_text, _ in found]

    def _concatenate_memo_texts(self, memo_list: list[str]) -> str:
        if not memo_list:
            return ""
        info = MEMORY_HEADER + "".join(f"- {memo}\n" for memo in memo_list)
        if self.verbosity >= 1:
            _say("\nMEMOS APPENDED TO LAST MESSAGE...\n" + info + "\n")
        return "\n" + info

    async def _analyze(self, text_to_analyze: str, analysis_instructions: str) -> str:
        """The analyzer's answer to ``analysis_instructions`` about ``text_to_analyze``, asked
        by the teachable agent in a two-message conversation of its own."""
        from ..._delivery import send

        agent, analyzer = self.teachable_agent, self.analyzer
        silent = self.verbosity < 2
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        async with lock:
            analyzer.reset()
            if analyzer in agent.chat_messages:
                # Only the current analysis is kept (AutoGen's grew without bound).
                agent.chat_messages[analyzer].clear()
            await send(agent, text_to_analyze, analyzer, False, silent)
            await send(agent, analysis_instructions, analyzer, True, silent)
            last = agent.chat_messages[analyzer][-1]
        if last.get("role") != "user":
            # The analyzer did not answer (its model returned nothing): no verdict.
            return ""
        return _text_of(last.get("content"))


def _says(word: str, answer: str) -> bool:
    return word in answer.lower()


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    from ....code_utils import content_str

    return content_str(content)
