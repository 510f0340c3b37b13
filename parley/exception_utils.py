"""AutoGen's ``autogen.exception_utils``: its exceptions, defined in :mod:`parley.exceptions`."""

from .exceptions import (
    AgentNameConflict,
    InvalidCarryOverType,
    NoEligibleSpeaker,
    SenderRequired,
    UndefinedNextAgent,
)

__all__ = [
    "AgentNameConflict",
    "InvalidCarryOverType",
    "NoEligibleSpeaker",
    "SenderRequired",
    "UndefinedNextAgent",
]
