"""The types ratchet: mypy over components/ and webapp/ ([tool.mypy] of pyproject.toml), run without its
ignore list, finds in each module at most the errors that list counts for it ("module",  # N), exactly
as many (a module fixed in part lowers its number), and none in a module not listed."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parent.parent
LISTED = re.compile(r'^\s*"([\w.]+)",\s*#\s*(\d+)\s*$', re.M)
ERROR = re.compile(r"^([\w/]+\.py):\d+: error:", re.M)


def listed(text: str) -> dict[str, int]:
    """module -> its counted errors, from the ignore list of pyproject.toml's [[tool.mypy.overrides]]."""
    block = text[text.index("[[tool.mypy.overrides]]") :]
    block = block[: block.index("ignore_errors")]
    return {m: int(n) for m, n in LISTED.findall(block)}


def module_of(path: str) -> str:
    name = path.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def counts(output: str) -> Counter:
    return Counter(module_of(p) for p in ERROR.findall(output))


def test_the_ignore_list_counts_every_modules_errors(tmp_path):
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    config = tomllib.loads(text)["tool"]["mypy"]
    overrides = config.get("overrides", [])
    assert [o.get("ignore_errors") for o in overrides] == [True], "one ignore list, of ignore_errors"
    assert sorted(overrides[0]["module"]) == sorted(listed(text)), "every module listed with its count"
    assert {"components", "webapp"} <= set(config["files"])
    plain = tmp_path / "mypy.ini"  # [tool.mypy] without the ignore list
    plain.write_text(
        "[mypy]\n"
        f"python_version = {config['python_version']}\n"
        f"files = {', '.join(config['files'])}\n"
        f"ignore_missing_imports = {config['ignore_missing_imports']}\n"
        f"disable_error_code = {', '.join(config['disable_error_code'])}\n"
    )
    out, err, _ = api.run(["--config-file", str(plain), "--cache-dir", str(ROOT / ".mypy_cache" / "ratchet")])
    assert "error:" in out or "Success" in out, err
    found, known = counts(out), listed(text)
    wrong = {
        m: f"{found.get(m, 0)} errors, listed with {known.get(m, 0)}"
        for m in set(found) | set(known)
        if found.get(m, 0) != known.get(m, 0)
    }
    assert not wrong, (
        "mypy's errors per module differ from pyproject.toml's ignore list (a new error: fix it; fewer: "
        f"lower the count, or take the module off at 0): {wrong}"
    )


def test_the_ratchet_reads_counts_and_errors():
    text = '[[tool.mypy.overrides]]\nmodule = [\n  "components.run.plan",  # 9\n  "webapp.serve",  # 8\n]\nignore_errors = true\n'
    assert listed(text) == {"components.run.plan": 9, "webapp.serve": 8}
    out = "webapp/serve.py:63: error: x  [list-item]\nwebapp/serve.py:64: note: y\ncomponents/run/__init__.py:1: error: z\n"
    assert counts(out) == Counter({"webapp.serve": 1, "components.run": 1})
