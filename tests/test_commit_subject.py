"""scripts/commit_subject.py, the commit-msg hook: a subject of at most 72 characters, a blank line after."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from commit_subject import problem  # noqa: E402


def test_a_subject_of_72_passes_and_73_does_not():
    assert problem("x" * 72 + "\n\nbody") == ""
    assert problem("x" * 73) == "the subject is 73 characters; keep it to 72 and put the detail in the body"
    assert problem("subject\nbody right after") == "leave a blank line between the subject and the body"
    assert problem("# a comment git adds\n\n") == "the commit message has no subject line"
    assert problem("# comment\nsubject\n\n# more") == ""


def test_the_hook_runs_it_on_the_message_file(tmp_path):
    hooks = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    hook = next(h for h in hooks if h["id"] == "commit-subject")
    assert hook["stages"] == ["commit-msg"] and hook["entry"].endswith("scripts/commit_subject.py")
    msg = tmp_path / "COMMIT_EDITMSG"
    msg.write_text("y" * 80 + "\n")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "commit_subject.py"), str(msg)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "80 characters" in done.stderr
