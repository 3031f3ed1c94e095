from hypothesis import given
from hypothesis import strategies as st

from components.core.positions import chunk_ranges, every, nearest_boundary


def test_nearest_boundary_picks_closest_and_ties_early():
    offsets = (0, 100, 250, 400)
    assert nearest_boundary(offsets, 260) == 2
    assert nearest_boundary(offsets, 175) == 1  # tie between 100 and 250 goes to the earlier
    assert nearest_boundary(offsets, 10_000) == 3


@given(st.lists(st.integers(1, 500), min_size=1, max_size=80), st.integers(1, 3000))
def test_every_is_within_one_page_of_each_multiple(sizes, step):
    offsets = [0]
    for s in sizes:
        offsets.append(offsets[-1] + s)
    total = offsets[-1]
    points = every(offsets, step)
    assert points == sorted(set(points))
    assert all(1 <= i <= len(sizes) - 1 for i in points)
    # no point leaves less than half a step after it
    assert all(2 * (total - offsets[i]) >= step for i in points)
    page = max(sizes)
    m = 1
    while m * step < total:
        i = nearest_boundary(offsets, m * step, 1, len(sizes) - 1) if len(sizes) >= 2 else None
        if i is not None and 2 * (total - offsets[i]) >= step:
            # every multiple that leaves half a step has a point, within one page of it
            assert i in points and abs(offsets[i] - m * step) <= page
        else:
            assert not points or offsets[points[-1]] < m * step + page  # nothing placed past it
        m += 1


def _pages(n, size=100):
    return [i * size for i in range(n + 1)]


def test_every_gives_the_r_and_r_reminder_counts():
    """R&R Table 1 at r = 10k: none at d = 10k, 1/3/7 at 20k/40k/80k, whether a document of about d
    tokens ends a little before d or a little after it."""
    for d, want in ((10_000, 0), (20_000, 1), (40_000, 3), (80_000, 7)):
        for total in (d - 150, d, d + 150):
            offsets = _pages(total // 50, 50)
            assert len(every(offsets, 10_000)) == want, (d, total)
    # R&R Table 5 (d = 40k): every 5k and 20k
    assert len(every(_pages(399), 5_000)) == 7
    assert len(every(_pages(399), 20_000)) == 1


def test_every_leaves_out_a_point_within_half_a_step_of_the_end():
    assert every(_pages(14), 1000) == []  # 1,400 tokens: a point at 1,000 would leave 400 < 500
    assert every(_pages(15), 1000) == [10]  # 1,500 tokens: it leaves 500, half a step
    assert every(_pages(29), 1000) == [10, 20]  # 2,900: the point at 2,000 leaves 900


def test_chunk_counts_are_d_over_c():
    """R&R Table 3 at d = 80k: c = 10k/20k/40k/80k gives m = 9/5/3/2 calls, 8/4/2/1 chunks; a tail
    shorter than half a chunk joins the previous chunk; c at or past the length is one chunk."""
    for total in (79_850, 80_000, 80_200):
        offsets = _pages(total // 50, 50)
        assert [len(chunk_ranges(offsets, c)) for c in (10_000, 20_000, 40_000, 80_000)] == [8, 4, 2, 1]
    assert chunk_ranges(_pages(10), 5_000) == [(0, 10)]  # c past the document's 1,000 tokens
    assert chunk_ranges(_pages(24), 1000) == [(0, 10), (10, 24)]  # a 400-token tail joins chunk 2
    assert chunk_ranges(_pages(25), 1000) == [(0, 10), (10, 20), (20, 25)]  # a 500-token tail stays


@given(st.lists(st.integers(1, 500), min_size=1, max_size=80), st.integers(1, 5000))
def test_chunks_cover_pages_in_order(sizes, size):
    offsets = [0]
    for s in sizes:
        offsets.append(offsets[-1] + s)
    ranges = chunk_ranges(offsets, size)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(sizes)
    assert all(a < b for a, b in ranges)
    assert all(ranges[i][1] == ranges[i + 1][0] for i in range(len(ranges) - 1))
