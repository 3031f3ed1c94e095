"""scripts/rescore_stores.py: a store's scores computed again from its stored answers, no model call."""

from __future__ import annotations

import importlib.util
import shutil
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("rescore_stores", ROOT / "scripts" / "rescore_stores.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_store_is_rescored_from_its_answers_and_put_back_in_the_shipped_shape(tmp_path, capsys):
    rescore = _script()
    db = tmp_path / "local-qwen-nq-bounds.sqlite"
    shutil.copy(ROOT / "sample_docs" / "runs" / db.name, db)
    conn = sqlite3.connect(db)
    want = conn.execute("SELECT id, ruler_all, ruler_part, subspan_em FROM trials ORDER BY id").fetchall()
    with conn:
        conn.execute("UPDATE trials SET ruler_all = NULL, subspan_em = 1 - subspan_em WHERE id <= 10")
    conn.close()
    assert rescore.main(["--check", str(db)]) == 1
    assert capsys.readouterr().out == (
        f"{db.name}: would change: ruler_all filled in 10 trials, subspan_em changed in 10 trials\n"
    )
    assert rescore.main([str(db)]) == 0
    assert (
        "changed: ruler_all filled in 10 trials, subspan_em changed in 10 trials" in capsys.readouterr().out
    )
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    assert (
        conn.execute("SELECT id, ruler_all, ruler_part, subspan_em FROM trials ORDER BY id").fetchall()
        == want
    )
    conn.close()
    assert rescore.main(["--check", str(db)]) == 0
    assert capsys.readouterr().out == f"{db.name}: current: no score changes\n"
    assert open(db, "rb").read(20)[18:20] == b"\x01\x01"  # rollback-journal mode, as shipped
    assert not Path(f"{db}-wal").exists()
