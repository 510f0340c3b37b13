"""Wolfram Alpha queries for MathChat's ``wolfram`` code blocks.

AutoGen used the ``wolframalpha`` package; this client speaks Wolfram Alpha's v2 query API over
HTTPS with the standard library, so MathChat needs no extra package. It needs an app id
(``WOLFRAM_ALPHA_APPID`` or ``wolfram_alpha_appid=``) and network access; without an app id it
raises at once, before anything is sent.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ...exceptions import WolframAlphaUnavailableError

__all__ = ["WolframAlphaAPIWrapper", "WolframAlphaUnavailableError"]

_ENDPOINT = "https://api.wolframalpha.com/v2/query"
_TIMEOUT = 30.0


class WolframAlphaAPIWrapper:
    """Runs one Wolfram Alpha query and returns ``(text, is_success)``."""

    def __init__(
        self,
        wolfram_alpha_appid: str | None = None,
        timeout: float = _TIMEOUT,
        endpoint: str = _ENDPOINT,
    ) -> None:
        appid = wolfram_alpha_appid or os.environ.get("WOLFRAM_ALPHA_APPID")
        if not appid:
            raise WolframAlphaUnavailableError(
                "a Wolfram Alpha query needs an app id: set the WOLFRAM_ALPHA_APPID environment "
                "variable or pass wolfram_alpha_appid (get one at https://developer.wolframalpha.com); "
                "or use prompt_type 'python', whose queries run as Python code"
            )
        self.wolfram_alpha_appid = appid
        self.timeout = timeout
        self.endpoint = endpoint

    def _fetch(self, query: str) -> dict[str, Any]:
        params = urllib.parse.urlencode(
            {
                "appid": self.wolfram_alpha_appid,
                "input": query,
                "output": "json",
                "format": "plaintext",
            }
        )
        with urllib.request.urlopen(f"{self.endpoint}?{params}", timeout=self.timeout) as response:
            body: dict[str, Any] = json.loads(response.read().decode("utf-8"))
        return body

    def run(self, query: str) -> tuple[str, bool]:
        """The query's assumption and answer pods as text, and whether an answer was found."""
        try:
            result = self._fetch(query).get("queryresult", {})
        except (urllib.error.URLError, TimeoutError, ValueError) as exc:
            # The error text, not the URL: the URL carries the app id.
            return f"Wolfram Alpha wasn't able to answer it ({type(exc).__name__}).", False
        if not result.get("success") or not result.get("pods"):
            return "Wolfram Alpha wasn't able to answer it.", False
        lines = []
        for pod in result["pods"]:
            texts = [s.get("plaintext") for s in pod.get("subpods", []) if s.get("plaintext")]
            if texts:
                lines.append(f"{pod.get('title', '')}: " + "; ".join(texts))
        if not lines:
            return "No good Wolfram Alpha Result was found.", False
        return "\n".join(lines), True
