"""Input and output streams (AutoGen's ``autogen.io``); filled by the conversation-core issue."""
