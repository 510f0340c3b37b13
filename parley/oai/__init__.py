"""The completion client (AutoGen's ``autogen.oai``); filled by the completion-client issue."""
