"""Code blocks and executors (AutoGen's ``autogen.coding``); filled by the code-execution issue."""
