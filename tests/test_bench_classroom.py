"""The classroom load generator against a real app server (started as `litm app` starts it): it must
speak Streamlit's websocket protocol well enough that the pages' scripts run to the end and send
their elements, and it must see the errors a class would see."""

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench import bench_classroom
from bench.stclient import Visit, read

pytestmark = pytest.mark.slow  # tens of seconds end to end: make test, not make check


def test_three_students_get_the_lesson_rendered_to_the_end():
    c = bench_classroom.measure(sessions=3, window=1.0, pages=["lesson", "results"], timeout=180, views=2)
    assert c.errors == []
    assert [v.page for v in c.teacher] == ["(root URL)", "lesson", "results"]
    assert len(c.visits) == 6
    for v in c.visits:
        assert v.ok and v.status == "ok", v
        assert v.elements >= 5, v  # the page's own elements arrived, not just the sidebar
        assert 0 < v.seconds < 180
    assert c.server_cpu_s > 0 and c.peak_mb > 50
    lines = bench_classroom.report(c)
    assert any(line.strip().startswith("lesson     to script finished: median") for line in lines)
    # then the server's CPU per page view, page by page, one view at a time
    assert set(c.page_cpu) == {"lesson", "results"} and all(len(v) == 2 for v in c.page_cpu.values())
    assert all(0 <= x < 30 for v in c.page_cpu.values() for x in v)
    assert any(line.strip().startswith("results    server CPU per view: median") for line in lines)
    assert any(line.startswith("goal server CPU < 0.1 s per default view: lesson") for line in lines)
    assert "errors: 0" in lines


def test_a_page_the_app_does_not_have_is_an_error_when_asked_for_and_left_out_by_default():
    asked = bench_classroom.measure(sessions=1, window=0, pages=["no-such-page"], timeout=180, views=0)
    assert asked.errors and all("page not found" in e for e in asked.errors)
    default = bench_classroom.measure(sessions=1, window=0, pages=None, timeout=180, views=0)
    assert default.pages == ["home", "lesson", "results", "compare"]  # the app has every default page
    assert default.errors == []


def test_exception_and_error_alert_elements_count_as_errors():
    visit = Visit("x")
    msg = ForwardMsg()
    msg.delta.new_element.exception.type = "KeyError"
    msg.delta.new_element.exception.message = "'boom'"
    assert read(msg, visit) == (False, [])
    alert = ForwardMsg()
    alert.delta.new_element.alert.body = "Something went wrong in Results: boom"
    alert.delta.new_element.alert.format = 1  # ERROR
    read(alert, visit)
    info = ForwardMsg()
    info.delta.new_element.alert.body = "Pick a run"
    info.delta.new_element.alert.format = 3  # INFO
    read(info, visit)
    finished = ForwardMsg()
    finished.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
    assert read(finished, visit)[0] is True
    assert visit.elements == 3 and len(visit.errors) == 2 and not visit.ok
    rerun = ForwardMsg()
    rerun.script_finished = ForwardMsg.FINISHED_EARLY_FOR_RERUN
    assert read(rerun, Visit("y"))[0] is False  # st.rerun: another run follows


def test_the_server_measured_is_the_one_the_bench_started_not_an_older_child():
    """A pytest process may still hold another test's app server: its CPU is not the class's."""
    import subprocess
    import sys

    def child():
        return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "webapp.serve"])

    older = child()
    try:
        before = bench_classroom.app_servers()
        assert older.pid in before
        newer = child()
        try:
            assert bench_classroom.app_server_pid(before) == newer.pid
        finally:
            newer.kill()
            newer.wait()
    finally:
        older.kill()
        older.wait()
