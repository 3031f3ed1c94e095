"""Test helpers: a loopback LLM server (llm_server.py) and small sweep inputs."""

from __future__ import annotations

from pathlib import Path


def facts_file(folder: Path, n: int = 4, seed: int = 1) -> Path:
    """A task file of n generated fact questions, each with its own distractors (~1,500 tokens)."""
    from components.tasks.generators import generate
    from components.tasks.importers import write_tasks

    path = Path(folder) / "facts.jsonl"
    write_tasks(generate("facts", n, seed), path)
    return path


def sweep_toml(
    folder: Path,
    *,
    name: str = "demo",
    base_url: str,
    n_tasks: int = 3,
    lengths=(700, 1200),  # long enough in PAGE tags (R&R §4.1) for three distinct gold places
    positions=(0.0, 0.5, 1.0),
    strategies=("baseline", "icr"),
    params: str = "{ k = 2 }",
    concurrency: int = 4,
    budget: str = "",
    extra_model: str = "",
    provider: str = "openai-compatible",
) -> Path:
    tasks = facts_file(folder, max(n_tasks, 2))
    text = f"""[sweep]
name = "{name}"
tasks = "{tasks.name}"
n_tasks = {n_tasks}
lengths = {list(lengths)}
positions = {list(positions)}
strategies = {list(strategies)!r}
params = {params}
concurrency = {concurrency}
[[sweep.models]]
provider = "{provider}"
model = "loop-model"
base_url = "{base_url}"
{extra_model}
{budget}
""".replace("'", '"')
    path = Path(folder) / f"{name}.toml"
    path.write_text(text)
    return path


def baseline_toml(folder: Path, base_url: str, *, n_tasks: int = 2, positions=(0.0,), **rest) -> Path:
    """The small sweep most fault tests send: baseline only, n_tasks questions at one length of 600
    tokens; `rest` goes to sweep_toml (concurrency, extra_model, provider, name)."""
    return sweep_toml(
        folder,
        base_url=base_url,
        strategies=("baseline",),
        n_tasks=n_tasks,
        lengths=(600,),
        positions=positions,
        **rest,
    )
