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
    points = every(offsets, step)
    assert points == sorted(set(points))
    assert all(1 <= i <= len(sizes) - 1 for i in points)
    m = 1
    while m * step < offsets[-1]:
        if len(sizes) >= 2:
            nearest = min(points, key=lambda i: abs(offsets[i] - m * step))
            # the boundary chosen sits within one page of the multiple
            page = max(sizes)
            assert abs(offsets[nearest] - m * step) <= page
        m += 1


@given(st.lists(st.integers(1, 500), min_size=1, max_size=80), st.integers(1, 5000))
def test_chunks_cover_pages_in_order(sizes, size):
    offsets = [0]
    for s in sizes:
        offsets.append(offsets[-1] + s)
    ranges = chunk_ranges(offsets, size)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(sizes)
    assert all(a < b for a, b in ranges)
    assert all(ranges[i][1] == ranges[i + 1][0] for i in range(len(ranges) - 1))
