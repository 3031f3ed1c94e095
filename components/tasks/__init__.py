"""Tasks: questions with gold answers and gold passages; importers, generators, sweep documents."""

from components.tasks.model import Passage, Task, TaskFileError, TaskSet

__all__ = ["Passage", "Task", "TaskFileError", "TaskSet"]
