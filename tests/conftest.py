import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITM_TESTING", "1")

if "LITM_DB" not in os.environ:  # never write the user's runs/litm.sqlite from a test
    import tempfile

    os.environ["LITM_DB"] = str(Path(tempfile.mkdtemp(prefix="litm-tests-")) / "runs.sqlite")
if "LITM_CACHE" not in os.environ:  # kept statistics (webapp/services/views.py) go to this run's own folder
    import tempfile

    os.environ["LITM_CACHE"] = tempfile.mkdtemp(prefix="litm-tests-views-")
if "LITM_WORKER_DIR" not in os.environ:  # the local model's worker (and the speed it timed) of this run's own
    import tempfile

    os.environ["LITM_WORKER_DIR"] = tempfile.mkdtemp(prefix="litmw-")


import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# Property tests judge their inputs, not the machine's speed: on cores busy with other work, Hypothesis's
# deadline and its "input generation is slow" check failed tests that were right (make check under load)
settings.register_profile("litm", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("litm")


@pytest.fixture(scope="session")
def _loopback_llm():
    from tests.support.llm_server import LLMServer

    with LLMServer() as srv:
        yield srv


@pytest.fixture
def server(_loopback_llm):
    """The loopback server speaking the OpenAI and Anthropic wire formats (tests/support/llm_server.py),
    one per test session, its counts and modes reset for each test that asks for it."""
    _loopback_llm.reset()
    return _loopback_llm


def _sample_docs_state() -> dict[str, str]:
    """sha256 of every file under sample_docs/ (new files such as a store's -wal or -shm count too), but
    Python's own bytecode cache: sample_docs is a data package, and a process that finds it through
    importlib.resources may write its __init__'s .pyc (ignored by git, not a shipped file)."""
    import hashlib

    folder = ROOT / "sample_docs"
    return {
        str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="session", autouse=True)
def _sample_docs_unchanged():
    """Reading never writes: the test run fails (at its end) when any file under sample_docs/ changed,
    appeared or disappeared while it ran, naming the files."""
    before = _sample_docs_state()
    yield
    after = _sample_docs_state()
    changed = [
        f"{p} ({'changed' if p in before else 'appeared'})" for p in after if before.get(p) != after[p]
    ]
    changed += [f"{p} (removed)" for p in before if p not in after]
    if changed:
        pytest.fail(
            "files under sample_docs/ changed during the test run (shipped files must stay as they are): "
            + ", ".join(changed),
            pytrace=False,
        )
