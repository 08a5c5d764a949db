"""How a run's rows are put in trec_eval's order and handed over (``evalsuite/io/run_qrels.py``):
the block-at-a-time pieces against numpy's and Python's own sorts, with blocks small enough that
every boundary case occurs, and the originals let go where the reader gives them up."""

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest

import evalsuite as es
from evalsuite.io import _read_ranked
from evalsuite.io._rank_order import _score_order_within_queries, _stable_group_order
from evalsuite.io.run_qrels import _first_seen, build_run, build_run_handed_over


@pytest.mark.parametrize("n_codes", [1, 5, 70_000])  # 70,000: past 16 bits, no narrow radix sort
@pytest.mark.parametrize("block", [1, 7, 1000, None])
def test_grouping_by_code_is_a_stable_argsort(n_codes, block):
    rng = np.random.default_rng(n_codes)
    codes = rng.integers(0, n_codes, size=20_000).astype(np.int32)
    order, counts = _stable_group_order(codes, n_codes, block=block)
    assert order.dtype == np.int32
    assert np.array_equal(order, np.argsort(codes, kind="stable"))
    assert np.array_equal(counts, np.bincount(codes, minlength=n_codes))


@pytest.mark.parametrize("block", [1, 50, 333, 1 << 18])
def test_each_query_sorted_by_score_a_block_of_queries_at_a_time(block):
    """Queries of 1-600 rows (some longer than a block), scores with many ties: rows grouped by
    query in file order of codes, score descending within each, and ``same`` true exactly where
    two neighbours share query and score."""
    rng = np.random.default_rng(block)
    sizes = rng.integers(1, 600, size=40)
    codes = rng.permutation(np.repeat(np.arange(sizes.size, dtype=np.int32), sizes))
    scores = rng.choice([0.0, -0.0, 1.5, 2.0, -3.25, 7.0], size=codes.size)
    order, same, ordered_scores = _score_order_within_queries(codes, scores, sizes.size, block=block)
    assert sorted(order.tolist()) == list(range(codes.size))
    assert np.array_equal(ordered_scores.view(np.uint64), scores[order].view(np.uint64))  # -0.0 kept
    ordered_codes, ordered_scores = codes[order], scores[order]
    assert np.array_equal(ordered_codes, np.sort(codes))
    within = ordered_codes[1:] == ordered_codes[:-1]
    assert not np.any(within & (ordered_scores[1:] > ordered_scores[:-1]))
    assert np.array_equal(same, within & (ordered_scores[1:] == ordered_scores[:-1]))


@pytest.mark.parametrize("block", [1, 99, 100, 250, 1 << 18])
def test_queries_of_equal_length_sorted_as_one_block_equal_the_sort_of_each(block):
    """A top-100 run of 30 queries, then 5 queries of other lengths: blocks of equal-length
    queries take the 2-D sort, the others the query-by-query one, and both agree with a stable
    sort on (query, -score) up to the order within ties."""
    rng = np.random.default_rng(block)
    sizes = np.concatenate([np.full(30, 100), [7, 1, 100, 300, 2]])
    codes = rng.permutation(np.repeat(np.arange(sizes.size, dtype=np.int32), sizes))
    scores = rng.choice(np.linspace(-2.0, 2.0, 37), size=codes.size)  # ties in every query
    order, same, ordered_scores = _score_order_within_queries(codes, scores, sizes.size, block=block)
    assert sorted(order.tolist()) == list(range(codes.size))
    expected = np.lexsort((-scores, codes))
    assert np.array_equal(codes[order], codes[expected])
    assert np.array_equal(scores[order], scores[expected])
    assert np.array_equal(ordered_scores, scores[order])
    ordered_codes = codes[order]
    assert np.array_equal(same, (ordered_codes[1:] == ordered_codes[:-1]) & (ordered_scores[1:] == ordered_scores[:-1]))


@pytest.mark.parametrize("block", [1, 3, 64, 1 << 20])
def test_codes_in_order_of_first_appearance(block):
    rng = np.random.default_rng(block)
    codes = rng.integers(0, 300, size=5000).astype(np.int32)
    codes[:400] = np.repeat(rng.permutation(300)[:40], 10)  # grouped stretches as well as shuffled ones
    expected = list(dict.fromkeys(codes.tolist()))
    assert _first_seen(codes, 301, block=block).tolist() == expected  # 300 never appears


def _shuffled_rows(n_queries=3, per_query=400, seed=0):
    rng = np.random.default_rng(seed)
    queries = np.repeat([f"q{i}" for i in range(n_queries)], per_query)
    docs = np.array([f"d{i}" for i in range(queries.size)])
    shuffle = rng.permutation(queries.size)
    scores = rng.random(queries.size)[shuffle]
    return pa.array(queries[shuffle].tolist()), pa.array(docs[shuffle].tolist()), scores


def test_handed_over_scores_are_freed_once_reordered(monkeypatch):
    """The reader's path: with the list the only holder, the file-order scores are gone as soon
    as their reordered copy exists (checked when the duplicate search, the next step, starts);
    the same rows as the public build_run."""
    from evalsuite.io import run_qrels

    query_ids, doc_ids, scores = _shuffled_rows()
    reference = build_run(query_ids, doc_ids, scores)
    watch = weakref.ref(scores)
    alive_at_duplicate_search = []
    real = run_qrels._find_duplicates

    def spy(*args):
        gc.collect()
        alive_at_duplicate_search.append(watch() is not None)
        return real(*args)

    monkeypatch.setattr(run_qrels, "_find_duplicates", spy)
    columns = [query_ids, doc_ids, scores, None]
    del scores
    run = build_run_handed_over(columns)
    assert columns == [] and alive_at_duplicate_search == [False]
    assert run.query_ids.tolist() == reference.query_ids.tolist()
    assert run.doc_ids.equals(reference.doc_ids) and np.array_equal(run.scores, reference.scores)


def test_build_run_leaves_the_callers_arrays_as_they_were():
    query_ids, doc_ids, scores = _shuffled_rows(seed=1)
    before = scores.copy(), doc_ids.to_pylist(), query_ids.to_pylist()
    run = build_run(query_ids, doc_ids, scores)
    assert np.array_equal(scores, before[0]) and doc_ids.to_pylist() == before[1] and query_ids.to_pylist() == before[2]
    assert np.all(np.diff(run.scores[:400]) <= 0)


def test_read_run_gives_its_columns_up(monkeypatch):
    """read_run hands the parsed columns over: nothing of the parse still holds them."""
    handed = []
    real = _read_ranked._Parsed.hand_over

    def spy(parsed):
        columns = real(parsed)
        handed.append(parsed)
        return columns

    monkeypatch.setattr(_read_ranked._Parsed, "hand_over", spy)
    run = es.read_run(b"q Q0 b 1 1.0 t\nq Q0 a 2 2.0 t\n", source_name="run.trec")
    assert run.doc_ids.to_pylist() == ["a", "b"]
    assert [(p.query_ids, p.doc_ids, p.values, p.ranks) for p in handed] == [(None, None, None, None)]


@pytest.mark.parametrize("data, released", [
    (b"q Q0 d 1 2.5 t\nq Q0 e 2 1.5 t\n", True),     # accepted by pyarrow
    (b"q Q0 d 1 2.5 t\n\nq Q0 e 2 1.5 t\n", False),  # a blank line: the text is read again
])
def test_the_text_is_let_go_only_once_pyarrows_table_is_accepted(data, released):
    calls = []
    inp = _read_ranked._Input("run.trec", "run.trec", data=data)
    parsed = _read_ranked._parse_trec_arrow(inp.arrow_source, "run", text_done=lambda: calls.append(1))
    assert calls == ([1] if released else [])
    assert (parsed is not None) == released
    if not released:  # the fallback still has every line
        run = es.read_run(data, source_name="run.trec")
        assert run.doc_ids.to_pylist() == ["d", "e"]


@pytest.mark.parametrize("per_query", [3, 300])  # one sort of all scores; each long query alone
def test_zero_and_negative_zero_tie_and_each_row_keeps_its_own(per_query):
    """0.0 and -0.0 are equal scores (ties broken by doc id descending), and each doc keeps the
    score its line gave, sign of zero included."""
    rng = np.random.default_rng(per_query)
    lines = [(q, f"d{i:04d}", rng.choice(["0.0", "-0.0"])) for q in ("a", "b") for i in range(per_query)]
    rng.shuffle(lines)
    text = "".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in lines).encode()
    run = es.read_run(text, source_name="zeros.trec")
    first = list(dict.fromkeys(q for q, _, _ in lines))
    assert run.query_ids.tolist() == first
    expected = sorted(lines, key=lambda line: (first.index(line[0]), [-ord(c) for c in line[1]]))
    assert run.doc_ids.to_pylist() == [d for _, d, _ in expected]
    assert np.signbit(run.scores).tolist() == [s.startswith("-") for _, _, s in expected]


def test_comment_lines_of_six_fields_are_not_read_as_queries():
    """A ``#`` line shaped like a run line would parse in pyarrow's fast path; the check over
    every chunk's query dictionary sends the file to the path that skips comments."""
    text = b"# Q0 d9 1 9.0 x\nq1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n#q2 Q0 d3 1 1.0 x\n"
    assert _read_ranked._parse_trec_arrow(lambda: pa.py_buffer(text), "run") is None
    run = es.read_run(text)
    assert run.query_ids == ["q1"] and len(run) == 2


@pytest.mark.parametrize("empty_chunk", [0, 1])
def test_an_empty_id_in_any_chunks_dictionary_is_named_by_row(empty_chunk):
    from evalsuite.io.columns import Locator, check_ids
    chunks = [pa.array(["a", "b"]).dictionary_encode(), pa.array(["c", "d"]).dictionary_encode()]
    chunks[empty_chunk] = pa.array(["e", ""]).dictionary_encode()
    with pytest.raises(es.EvalSuiteError, match="empty id") as caught:
        check_ids(pa.chunked_array(chunks), "query_id", Locator("run.trec", lambda row: row + 1))
    assert caught.value.line == 2 * empty_chunk + 2
    check_ids(pa.chunked_array([pa.array(["a"]).dictionary_encode()] * 2), "query_id", Locator("run.trec"))
