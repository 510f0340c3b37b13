"""``RetrieveUserProxyAgent``: retrieval-augmented chat (AutoGen's ``retrieve_user_proxy_agent``).

The proxy finds the chunks of its documents nearest to the problem, sends them with the problem
to an assistant, and when the assistant answers ``UPDATE CONTEXT`` (or misses the expected
answer prefix) it forgets the conversation on both sides and sends the next chunks::

    rag = RetrieveUserProxyAgent("rag", retrieve_config={"docs_path": "docs/", "task": "qa"})
    rag.initiate_chat(assistant, message=rag.message_generator, problem="How do I ...?")

Needs ``pip install 'parley[retrieve]'`` (ChromaDB, the file readers, the embedding model).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from typing import Any, Literal

from ...code_utils import content_str, extract_code
from ...formatting_utils import colored
from ...retrieve_utils import TEXT_FORMATS, limits_from_config
from ...token_count_utils import count_token
from ..agent import Agent
from ..user_proxy_agent import UserProxyAgent
from ._retrieve_helpers import (
    NO_INSTALL,
    check_update_context,
    get_ipython,
    message_text,
    run_in_ipython,
    say,
)
from ._retrieve_prompts import PROMPT_CODE, PROMPT_DEFAULT, PROMPT_QA, UPDATE_CONTEXT_IN_PROMPT
from ._retrieve_store import (
    Chunking,
    RetrievePlan,
    fill_collection,
    index_with_chroma_client,
    query_with_chroma_client,
)
from .vectordb.base import QueryResults, VectorDB

__all__ = [
    "HASH_LENGTH",
    "PROMPT_CODE",
    "PROMPT_DEFAULT",
    "PROMPT_QA",
    "UPDATE_CONTEXT_IN_PROMPT",
    "RetrieveUserProxyAgent",
]

logger = logging.getLogger(__name__)
HASH_LENGTH = int(os.environ.get("HASH_LENGTH", 8))


class RetrieveUserProxyAgent(UserProxyAgent):
    """A user proxy that answers a problem with the help of retrieved document chunks.

    ``retrieve_config`` keys (all optional): ``task`` (``"default"``, ``"code"``, ``"qa"``),
    ``vector_db`` (``"chroma"``, ``"qdrant"``, a ``VectorDB``, or None for the old Chroma-only
    path), ``db_config``, ``docs_path``, ``new_docs``, ``model``, ``chunk_token_size``,
    ``context_max_tokens``, ``chunk_mode``, ``must_break_at_empty_line``,
    ``embedding_function``, ``customized_prompt``, ``customized_answer_prefix``,
    ``update_context``, ``collection_name``, ``get_or_create``, ``overwrite``,
    ``custom_token_count_function``, ``custom_text_split_function``, ``custom_text_types``,
    ``recursive``, ``distance_threshold``, and for the old path ``client``, ``extra_docs``,
    ``embedding_model``. Other keyword arguments go to :class:`UserProxyAgent`.
    """

    def __init__(
        self,
        name: str = "RetrieveChatAgent",
        human_input_mode: Literal["ALWAYS", "NEVER", "TERMINATE"] = "ALWAYS",
        is_termination_msg: Callable[[dict[str, Any]], bool] | None = None,
        retrieve_config: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name=name,
            human_input_mode=human_input_mode,
            is_termination_msg=is_termination_msg,
            **kwargs,
        )
        config = self._read_retrieve_config(retrieve_config)
        self._retrieve_config = config
        self._task = config.get("task", "default")
        self._vector_db: Any = config.get("vector_db", "chroma")
        db_config = config.get("db_config", {})
        if not isinstance(db_config, dict):
            raise ValueError("`db_config` should be a dictionary.")
        self._db_config = dict(db_config)
        if "embedding_function" in config:
            self._db_config["embedding_function"] = config["embedding_function"]
        self._client = config.get("client")
        self._docs_path = config.get("docs_path")
        if "docs_path" not in config:
            logger.warning(
                "docs_path is not provided in retrieve_config. Will raise ValueError if the "
                "collection `%s` doesn't exist.",
                config.get("collection_name", "autogen-docs"),
            )
        self._extra_docs = config.get("extra_docs", False)
        self._new_docs = config.get("new_docs", True)
        self._collection_name = config.get("collection_name", "autogen-docs")
        self._model = config.get("model", "gpt-4")
        self._max_tokens = self.get_max_tokens(self._model)
        self._chunk_token_size = int(config.get("chunk_token_size", self._max_tokens * 0.4))
        self._chunk_mode = config.get("chunk_mode", "multi_lines")
        self._must_break_at_empty_line = config.get("must_break_at_empty_line", True)
        self._embedding_model = config.get("embedding_model", "all-MiniLM-L6-v2")
        self._embedding_function = config.get("embedding_function")
        self.customized_prompt = config.get("customized_prompt")
        self.customized_answer_prefix = config.get("customized_answer_prefix", "").upper()
        self.update_context = config.get("update_context", True)
        self._get_or_create = (
            config.get("get_or_create", False) if self._docs_path is not None else True
        )
        self._overwrite = config.get("overwrite", False)
        self.custom_token_count_function: Callable[[str, str], int] = config.get(
            "custom_token_count_function", count_token
        )
        self.custom_text_split_function = config.get("custom_text_split_function")
        self._custom_text_types = config.get("custom_text_types", TEXT_FORMATS)
        self._recursive = config.get("recursive", True)
        self._read_limits = limits_from_config(config)
        self._context_max_tokens = config.get("context_max_tokens", self._max_tokens * 0.8)
        self._distance_threshold = config.get("distance_threshold", -1)
        self._collection = False  # whether the collection has been prepared
        self._ipython = get_ipython()
        self._doc_idx = -1
        self._results: QueryResults = []
        self._intermediate_answers: set[str] = set()
        self._doc_contents: list[str] = []
        self._doc_ids: list[Any] = []
        self._current_docs_in_context: list[str] = []
        self._search_string = ""
        self.problem = ""
        self.n_results = 20
        if isinstance(self._vector_db, str):
            from .vectordb._factory import VectorDBFactory

            self._vector_db = VectorDBFactory.create_vector_db(self._vector_db, **self._db_config)
        if is_termination_msg is None:
            self._is_termination_msg = self._is_termination_msg_retrievechat
        self.register_reply(Agent, RetrieveUserProxyAgent._generate_retrieve_user_reply, position=2)
        self.register_hook("process_message_before_send", self._check_update_context_before_send)

    def _read_retrieve_config(self, retrieve_config: dict[str, Any] | None) -> dict[str, Any]:
        """The retrieve_config this agent works from: a copy of the caller's (a subclass that
        takes older keys turns them into today's here)."""
        return dict(retrieve_config or {})

    @staticmethod
    def get_max_tokens(model: str = "gpt-3.5-turbo") -> int:
        if "32k" in model:
            return 32000
        if "16k" in model:
            return 16000
        if "gpt-4" in model:
            return 8000
        return 4000

    # -- retrieval ---------------------------------------------------------------------------

    def _reset(self, intermediate: bool = False) -> None:
        self._doc_idx = -1  # the position in the current results of the last doc used
        self._results = []
        if not intermediate:
            self._intermediate_answers = set()
            self._doc_contents = []
            self._doc_ids = []

    def _init_db(self) -> None:
        fill_collection(self._vector_db, self._plan())

    def retrieve_docs(self, problem: str, n_results: int = 20, search_string: str = "") -> None:
        """Find the ``n_results`` chunks nearest to ``problem`` (containing ``search_string``,
        with Chroma) and keep them as the current results."""
        if isinstance(self._vector_db, VectorDB):
            if not self._collection or not self._get_or_create:
                say("Trying to create collection.")
                self._init_db()
                self._collection = self._get_or_create = True
            extra: dict[str, Any] = {}
            if getattr(self._vector_db, "type", "") == "chroma":
                extra["where_document"] = {"$contains": search_string} if search_string else None
            results = self._vector_db.retrieve_docs(
                queries=[problem],
                n_results=n_results,
                collection_name=self._collection_name,
                distance_threshold=self._distance_threshold,
                **extra,
            )
            label = "VectorDB returns doc_ids: "
        else:
            results = self._retrieve_with_chroma_client(problem, n_results, search_string)
            label = "doc_ids: "
        self._search_string = search_string
        self._results = results
        say(label, [[hit[0]["id"] for hit in hits] for hits in results])

    def _retrieve_with_chroma_client(
        self, problem: str, n_results: int, search_string: str
    ) -> QueryResults:
        """AutoGen's older path (``vector_db=None``): a Chroma client used directly."""
        plan = self._plan()
        if not self._collection or not self._get_or_create:
            say("Trying to create collection.")
            self._client = index_with_chroma_client(self._client, plan)
            self._collection = self._get_or_create = True
        return query_with_chroma_client(self._client, plan, problem, n_results, search_string)

    def _plan(self) -> RetrievePlan:
        """The settings both retrieval paths work from. Read from the attributes each time:
        AutoGen's subclasses may change them."""
        return RetrievePlan(
            name=self._collection_name,
            docs_path=self._docs_path,
            get_or_create=self._get_or_create,
            overwrite=self._overwrite,
            new_docs=self._new_docs,
            extra_docs=self._extra_docs,
            embedding_model=self._embedding_model,
            embedding_function=self._embedding_function,
            distance_threshold=self._distance_threshold,
            chunking=Chunking(
                chunk_token_size=self._chunk_token_size,
                chunk_mode=self._chunk_mode,
                must_break_at_empty_line=self._must_break_at_empty_line,
                custom_text_split_function=self.custom_text_split_function,
                custom_text_types=self._custom_text_types,
                recursive=self._recursive,
                limits=self._read_limits,
            ),
        )

    def _get_context(self, results: QueryResults) -> str:
        """The next chunks of the first query's results that fit in ``context_max_tokens``
        (at most ``n_results`` of them), skipping those used already."""
        contents = ""
        self._current_docs_in_context = []
        used_tokens = 0
        taken = 0
        start = self._doc_idx
        for idx, (doc, _distance) in enumerate(results[0] if results else []):
            if idx <= start or doc["id"] in self._doc_ids:
                continue
            tokens = self.custom_token_count_function(doc["content"], self._model)
            if tokens > self._context_max_tokens:
                say(
                    colored(
                        f"Skip doc_id {doc['id']} as it is too long to fit in the context.", "green"
                    )
                )
                self._doc_idx = idx
                continue
            if used_tokens + tokens > self._context_max_tokens:
                break
            say(colored(f"Adding content of doc {doc['id']} to context.", "green"))
            used_tokens += tokens
            contents += doc["content"] + "\n"
            metadata = doc.get("metadata")
            if isinstance(metadata, dict):
                self._current_docs_in_context.append(metadata.get("source", ""))
            self._doc_idx = idx
            self._doc_ids.append(doc["id"])
            self._doc_contents.append(doc["content"])
            taken += 1
            if taken >= self.n_results:
                break
        return contents

    def _generate_message(self, doc_contents: str, task: str = "default") -> str:
        if not doc_contents:
            say(colored("No more context, will terminate.", "green"))
            return "TERMINATE"
        if self.customized_prompt:
            return str(
                self.customized_prompt.format(
                    input_question=self.problem, input_context=doc_contents
                )
            )
        kind = task.upper()
        if kind == "CODE":
            return PROMPT_CODE.format(input_question=self.problem, input_context=doc_contents)
        if kind == "QA":
            return PROMPT_QA.format(input_question=self.problem, input_context=doc_contents)
        if kind == "DEFAULT":
            return PROMPT_DEFAULT.format(
                input_question=self.problem,
                input_context=doc_contents,
                input_sources=self._current_docs_in_context,
            )
        raise NotImplementedError(f"task {task} is not implemented.")

    @staticmethod
    def message_generator(
        sender: RetrieveUserProxyAgent, recipient: Agent, context: dict[str, Any]
    ) -> str:
        """The first message of a chat: ``initiate_chat(assistant, message=proxy.message_generator,
        problem=..., n_results=20, search_string="")``."""
        sender._reset()
        problem = context.get("problem", "")
        n_results = context.get("n_results", 20)
        search_string = context.get("search_string", "")
        sender.retrieve_docs(problem, n_results, search_string)
        sender.problem = problem
        sender.n_results = n_results
        return sender._generate_message(sender._get_context(sender._results), sender._task)

    # -- the UPDATE CONTEXT protocol ------------------------------------------------------------

    def _check_update_context(self, message: Any) -> tuple[bool, bool]:
        return check_update_context(message_text(message), self.customized_answer_prefix)

    def _is_termination_msg_retrievechat(self, message: Any) -> bool:
        """A reply ends the chat unless it has Python code to run or asks for other context."""
        if isinstance(message, dict):
            message = message.get("content")
        if message is None:
            return False
        has_python = any(lang == "python" for lang, _ in extract_code(content_str(message)))
        asks, misses_prefix = self._check_update_context(message)
        return not (has_python or asks or misses_prefix)

    def _next_context(self) -> str:
        """The next chunks for the problem: from the current results, else from asking the
        database for 3, 5, 7, 9 times as many."""
        contents = self._get_context(self._results)
        for k in range(1, 5):
            if contents:
                break
            wanted = self.n_results * (2 * k + 1)
            self._reset(intermediate=True)
            self.retrieve_docs(self.problem, wanted, self._search_string)
            contents = self._get_context(self._results)
            if wanted > len(self._results[0] if self._results else []):
                break
        return contents

    def _generate_retrieve_user_reply(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        config: Any = None,
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """On ``UPDATE CONTEXT`` (or an answer without the expected prefix): forget the chat on
        both sides and send the problem again with other context."""
        if messages is None:
            messages = self.chat_messages[sender]
        message = messages[-1]
        asks, misses_prefix = self._check_update_context(message)
        if not (self.update_context and (asks or misses_prefix)):
            return False, None
        say(colored("Updating context and resetting conversation.", "green"))
        first_line = message_text(message).split("\n")[0].strip()
        intermediate = re.split(r"(?<=[.!?])\s+", first_line)[0]
        self._intermediate_answers.add(intermediate)
        if asks:
            contents = self._next_context()
        else:
            # The partial answer is the query now; the context grows with what it finds.
            contents = ""
            for k in range(5):
                wanted = self.n_results * (2 * k + 1)
                self._reset(intermediate=True)
                self.retrieve_docs(intermediate, wanted, self._search_string)
                self._get_context(self._results)
                contents = "\n".join(self._doc_contents)
                if contents or wanted > len(self._results[0] if self._results else []):
                    break
        self.clear_history()
        if sender is not None and hasattr(sender, "clear_history"):
            sender.clear_history()
        return True, self._generate_message(contents, task=self._task)

    def _check_update_context_before_send(
        self, sender: Agent, message: Any, recipient: Agent, silent: bool
    ) -> Any:
        """``UPDATE CONTEXT`` typed by the human becomes the next context message."""
        if message_text(message).strip().upper() != "UPDATE CONTEXT":
            return message
        return self._generate_message(self._next_context(), task=self._task)

    def run_code(self, code: str, **kwargs: Any) -> tuple[int, str, Any]:
        """No package installs; Python runs in the notebook's own kernel when there is one."""
        lang = kwargs.get("lang")
        if code.startswith(("!", "pip")) or lang in ("bash", "shell", "sh"):
            return 0, NO_INSTALL, None
        if self._ipython is None or lang != "python":
            return super().run_code(code, **kwargs)
        return run_in_ipython(self._ipython, code)
