"""LLM loops: the teacher, the sub-agents, the extraction stages, their tools and prompts."""
