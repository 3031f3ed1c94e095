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
