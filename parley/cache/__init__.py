"""Response caches (AutoGen's ``autogen.cache``); filled by the completion-client issue."""
