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


import pytest  # noqa: E402


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
