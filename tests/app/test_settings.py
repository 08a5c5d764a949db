"""Reader settings from the environment (and a bad one), and which files are read in the reader
processes."""

from __future__ import annotations

import pytest

import evalsuite as es


def test_reader_settings_from_the_environment_and_a_bad_one(monkeypatch):
    from dashboard import loaders
    from evalsuite.io import isolation

    monkeypatch.setenv("EVALSUITE_READER_MAX_ROWS", "5")
    monkeypatch.setenv("EVALSUITE_READER_TIMEOUT_S", "soon")
    loaders.reader_limits.clear()
    loaders.start_readers.clear()
    try:
        assert loaders.reader_limits().max_rows == 5
        problem = loaders.start_readers()
        assert "EVALSUITE_READER_TIMEOUT_S" in problem and "'soon'" in problem
        assert isolation.default_pool().timeout_s == isolation.DEFAULT_TIMEOUT_S
        data = b"".join(b"q1 Q0 d%d 1 1.0 t\n" % i for i in range(6))
        with pytest.raises(es.EvalSuiteError, match="max_rows=5"):
            loaders.read_run.__wrapped__("digest", "six.trec", data)
    finally:
        loaders.reader_limits.clear()
        loaders.start_readers.clear()


def test_uploads_are_read_in_the_reader_processes_and_the_samples_here(monkeypatch):
    from dashboard import loaders
    from dashboard.constants import SAMPLE_FILES

    sample = SAMPLE_FILES[0][1].read_bytes()
    assert not loaders._isolate(loaders.digest_of(sample), sample)
    upload = sample + b"q9 0 d9 1\n"
    assert loaders._isolate(loaders.digest_of(upload), upload)
    assert loaders._isolate(loaders.digest_of(sample), upload)  # a digest that does not match its bytes
    calls = []
    monkeypatch.setattr(es, "read_qrels", lambda data, **kw: calls.append(kw["isolate"]))
    loaders.read_qrels.__wrapped__(loaders.digest_of(upload), "upload.qrels", upload)
    assert calls == [True]
