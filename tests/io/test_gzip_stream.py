"""A gzip TREC run or qrels file is inflated while pyarrow parses it (``_Input.gunzip_stream``,
``_read_ranked._parse_trec_streamed``): the same result as the uncompressed file, whatever a
later piece holds, and the same errors."""

import gzip

import pytest

import evalsuite as es
from evalsuite.errors import EvalSuiteError
from evalsuite.io import _reading
from evalsuite.io.limits import _PieceStream
from evalsuite.io._trec_scan import _NotAsScanned, _PieceScan
from evalsuite.io.limits import ReadLimits


def run_text(n_lines: int = 100_000) -> bytes:
    """About 2.7 MB of run lines: more than the 64 KiB head and two 1 MiB pieces."""
    return b"".join(b"q%d Q0 doc%d %d %d.25 bm25\n" % (i // 100, i, i % 100 + 1, 1000 - i % 100)
                    for i in range(n_lines))


def outcome(read, data: bytes, **options):
    """What a reader makes of ``data``: its frame and warnings, or its error's message."""
    try:
        result = read(data, source_name="run.trec", **options)
    except EvalSuiteError as exc:
        return "error", str(exc)
    return "read", result.to_dataframe().to_dict("list"), list(getattr(result, "warnings", []))


def test_a_gzip_run_and_qrels_are_never_inflated_whole(monkeypatch, tmp_path):
    """gunzip (the whole text at once) is not called; bytes and a path read the same as the text."""
    text = run_text()
    qrels = b"".join(b"q%d 0 doc%d %d\n" % (i // 100, i, i % 3) for i in range(0, 100_000, 7))
    expected_run, expected_qrels = outcome(es.read_run, text), outcome(es.read_qrels, qrels)
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(text))

    def whole(*args, **kwargs):
        raise AssertionError("the whole text was inflated")

    monkeypatch.setattr(_reading, "gunzip", whole)
    assert outcome(es.read_run, gzip.compress(text)) == expected_run
    assert outcome(es.read_qrels, gzip.compress(qrels)) == expected_qrels
    assert outcome(lambda p, **o: es.read_run(str(p), **o), path) == expected_run
    # Two members, cut in the middle of a line.
    assert outcome(es.read_run, gzip.compress(text[:1_500_007]) + gzip.compress(text[1_500_007:])) == expected_run


@pytest.mark.parametrize("surprise", [
    b"q7 Q0\tdocx 1 1.5 bm25\n",          # a tab: pyarrow would keep it inside a field
    b"q7 Q0 doc\xc3\xa9 1 1.5 bm25\n",     # not ASCII after an ASCII head
    b"q7 Q0 docx  1 1.5 bm25\n",           # two spaces: an empty field
    b"q7 Q\xff docx 1 1.5 bm25\n",         # not UTF-8 in a field read only to check it
    b"# a comment\n",
    b"\n",                                 # a blank line
    b"q7 Q0 docx 1 1.5 bm25\r\n",          # CRLF
    b"q7 Q0 docx 1 1.5\n",                 # five fields
    b"q7 Q0 docx 1 high bm25\n",           # a score that is not a number
    b"q7 Q0 docx 1 1.5 other\n",           # a second tag
])
@pytest.mark.parametrize("at", [1_000_000, 2_200_000])
def test_what_a_later_piece_holds_reads_as_in_the_uncompressed_file(surprise, at):
    """The head promised plain single spaces; a line far past it (in the first or a later 1 MiB
    piece) breaks the promise: the result, or the error with its line number, is the text's."""
    text = run_text()
    cut = text.index(b"\n", at) + 1
    data = text[:cut] + surprise + text[cut:]
    assert outcome(es.read_run, gzip.compress(data)) == outcome(es.read_run, data)


def test_a_double_space_across_two_pieces_is_seen():
    """The last byte of one piece and the first of the next make the pair."""
    scan = _PieceScan(plain=True, max_line_bytes=1000)
    scan(b"q Q0 d 1 2 t\nq Q0 ")
    with pytest.raises(_NotAsScanned):
        scan(b" d 1 2 t\n")
    not_plain = _PieceScan(plain=False, max_line_bytes=1000)
    not_plain(b"q Q0 ")
    not_plain(b" d 1 2 t\n")


def test_a_long_line_is_found_across_and_inside_pieces():
    """Line lengths as check_text counts them (the line feed not included)."""
    scan = _PieceScan(plain=True, max_line_bytes=10)
    scan(b"abcde")
    scan(b"fghij\nab")       # a 10-byte line: allowed
    with pytest.raises(_NotAsScanned):
        scan(b"cdefghijk\n")  # 2 + 9 = 11 bytes
    inside = _PieceScan(plain=True, max_line_bytes=10)
    inside(b"a\nb\n")
    with pytest.raises(_NotAsScanned):
        inside(b"x\n" + b"y" * 11 + b"\nz\n")


@pytest.mark.parametrize("at", [30_000, 1_500_000])
def test_a_long_line_in_a_gzip_file_is_named_as_in_the_text(at):
    text = run_text()
    cut = text.index(b"\n", at) + 1
    data = text[:cut] + b"q7 Q0 " + b"d" * 300_000 + b" 1 1.5 bm25\n" + text[cut:]
    limits = ReadLimits(max_line_bytes=200_000)
    gz, plain = outcome(es.read_run, gzip.compress(data), limits=limits), outcome(es.read_run, data, limits=limits)
    assert gz == plain and gz[0] == "error" and "line" in gz[1] and "max_line_bytes" in gz[1]


def test_a_gzip_run_past_max_bytes_or_cut_short_is_refused():
    text = run_text()
    with pytest.raises(EvalSuiteError, match="expands past"):
        es.read_run(gzip.compress(text), source_name="run.trec.gz", limits=ReadLimits(max_bytes=2_000_000))
    with pytest.raises(EvalSuiteError, match="not a valid gzip file"):
        es.read_run(gzip.compress(text)[:200_000], source_name="run.trec.gz")


def test_a_piece_stream_reads_like_the_joined_pieces():
    seen = []
    stream = _PieceStream(iter([b"ab", b"cde", b"f"]), seen.append)
    assert [stream.read(1), stream.read(3), stream.read(0), stream.read(-1), stream.read(5)] == \
        [b"a", b"bcd", b"", b"ef", b""]
    assert seen == [b"ab", b"cde", b"f"]
