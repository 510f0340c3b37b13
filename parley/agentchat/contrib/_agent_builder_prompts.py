"""AgentBuilder's texts: what the builder model is asked, and what the built agents are told.

They are class attributes of :class:`BuilderTexts`, the base of ``AgentBuilder``.
"""

from __future__ import annotations

__all__ = ["BuilderTexts"]


class BuilderTexts:
    """AgentBuilder's texts as class attributes of AutoGen's names: ``AgentBuilder`` derives
    from this class, so a subclass (or an instance) can change one."""

    DEFAULT_PROXY_AUTO_REPLY = (
        "The last message had no code for me to run. The group chat manager should let another "
        'member speak. To end the conversation, a member should reply with just "TERMINATE".'
    )

    GROUP_CHAT_DESCRIPTION = """# Group chat instruction
You are working in a group chat with other experts and a group chat manager.
Read the earlier messages of the other members (and your own), stay on their topic and answer them.

**Your role is**: {name}
Group chat members: {members}{user_proxy_desc}

Once the task is done and its result carefully verified, and the other members agree, end the
conversation by replying with just "TERMINATE".

# Your profile
{sys_msg}
"""

    DEFAULT_DESCRIPTION = """## Your role
[The expert's name and a description of their skills]

## Task and skill instructions
- [What the task is]
- [Which skills it needs]
- [(Optional) Anything else the expert should know]
"""

    DEFAULT_COMPUTER_TERMINAL_DESCRIPTION = (
        "A computer terminal that does nothing but run the Python scripts (in ```python code "
        "blocks) and shell scripts (in ```sh code blocks) it is given."
    )

    AGENT_NAME_PROMPT = """# Your task
Suggest at most {max_agents} experts, by name, for the following user requirement.

## User requirement
{task}

# Task requirement
- Name each expert as [skill]_Expert.
- Reply with the experts' names only, separated by ",".
For example: Python_Expert, Math_Expert, ...
"""

    AGENT_SYS_MSG_PROMPT = """# Your goal
- Write a clear, unambiguous description of the expert below for the task below, by filling in the template.
- Include everything the expert needs to know.

# Task
{task}

# Expert name
{position}

# Template
{default_sys_msg}
"""

    AGENT_DESCRIPTION_PROMPT = """# Your goal
Summarize the following expert's description in one sentence.

# Expert name
{position}

# Expert's description
{sys_msg}
"""

    AGENT_SEARCHING_PROMPT = """# Your goal
Which of these experts should work on the following task?

# TASK
{task}

# EXPERT LIST
{agent_list}

# Requirement
- Check that the experts' names and profiles fit the task.
- Select fewer than {max_agents} experts; fewer is better.
- Separate the names with commas, with "_" instead of spaces, e.g. Product_manager,Programmer
- Return the list of names only.
"""

    AGENT_SELECTION_PROMPT = """# Your goal
Match each skill of the skill set with an expert of the expert pool.

# Skill set
{skills}

# Expert pool (each as "name: description")
{expert_pool}

# Answer format
```json
{{
    "skill_1 description": "expert_name: expert_description",
    "skill_2 description": "None",
    ...
}}
```
Use "None" for a skill that no expert in the pool fits.
"""

    CODING_AND_TASK_SKILL_INSTRUCTION = """## Useful instructions for task-solving
- Solve the task step by step if you need to.
- When you find an answer, verify it carefully; include evidence that can be checked (a test case, say) when you can.
- Base every reply on the facts you were given.

## How to verify?
**Assume the other members' answers are wrong until they give clear enough evidence.**
- Verify with step-by-step backward reasoning.
- Write test cases for the general task.

## How to use code?
- Suggest Python code (in a python code block) or a shell script (in a sh code block) for the Computer_terminal to run.
- If a Python package is missing, suggest a `pip install` in a ```sh ... ``` block.
- Always say the script type in the code block.
- Don't suggest a code block the user would have to modify, nor one that is not meant to be run.
- The Computer_terminal cannot change your code.
- **Print the output you need with `print`**.
- Check the result the Computer_terminal returns; don't ask it to copy and paste results.
- If the result shows an error, fix it and send the code again.
"""

    CODING_PROMPT = """Does the following task need programming to solve (calling an external API or
tool from code, say), or would code make it easier?

TASK: {task}

Answer only YES or NO.
"""
