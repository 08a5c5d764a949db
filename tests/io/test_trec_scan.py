"""The scans of a TREC file's bytes before pyarrow parses it (``evalsuite/io/_trec_scan.py``)."""

import pytest

from evalsuite.io._reading import _Input
from evalsuite.io._trec_scan import _plain_spaced, _scan_whitespace


@pytest.mark.parametrize("data, separator, plain", [
    (b"q Q0 d 1 2 t\nq Q0 e 2 1 t\n", " ", True),
    (b"q Q0 d  1 2 t\n", " ", False),                  # two spaces: a field may be empty
    (b"q Q0 d 1 2 t\nq Q0 \xc3\xa9 2 1 t\n", " ", False),  # not ASCII
    (b"q Q0 d 1 2 t\r\n", " ", True),                 # CRLF line ends: pyarrow ends lines there too
    (b"q\tQ0\td\t1\t2\tt\r\n", "\t", True),          # tab-separated, CRLF
    (b"q\tQ0\td\t\t1\t2\tt\n", "\t", False),         # two tabs
    (b"q Q0 d 1 2 t\x0b\n", None, False),             # vertical tab
    (b"q Q0 d 1 2 t\r", None, False),                 # a lone CR at the very end
])
def test_the_separator_and_plain_fields_of_a_trec_file(data, separator, plain):
    """One pass over files whose only control byte is the line feed, exact searches otherwise;
    blocks of 1-3 bytes put every pair across a block boundary."""
    inp = _Input("run.trec", "run.trec", data=data)
    assert _scan_whitespace(inp) == (separator, plain)
    for block in (1, 2, 3):
        fast = _plain_spaced(inp, block=block)
        assert fast is None if b"\r" in data or b"\t" in data or b"\x0b" in data else fast == plain


def test_a_file_by_path_is_scanned_like_its_bytes(tmp_path):
    """Paths are scanned through a memory map, bytes directly: the same answers."""
    cases = {b"q Q0 d 1 2 t\n": (" ", True), b"q\tQ0\td\t1\t2\tt\n": ("\t", True),
             b"q Q0 d  1 2 t\n": (" ", False), b"q Q0 d 1 2 t\x0c\n": (None, False)}
    for data, expected in cases.items():
        path = tmp_path / "run.trec"
        path.write_bytes(data)
        from_path = _Input("run.trec", "run.trec", path=str(path), size=len(data), head=data)
        assert _scan_whitespace(from_path) == _scan_whitespace(_Input("run.trec", "run.trec", data=data)) == expected
