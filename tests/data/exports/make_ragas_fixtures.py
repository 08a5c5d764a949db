import sys, math
from ragas import EvaluationDataset
import ragas.dataset_schema as _ds
_ds.parse_run_traces = lambda traces, run_id=None: []  # no evaluation ran: no traces to parse
from ragas.dataset_schema import EvaluationResult, SingleTurnSample
samples = [
    SingleTurnSample(user_input="Who wrote Emma?", retrieved_contexts=["Emma is a novel by Jane Austen.", "It is set in 'Highbury', Surrey."],
                     response="Jane Austen wrote Emma.", reference="Jane Austen"),
    SingleTurnSample(user_input="When was Emma published?", retrieved_contexts=["Emma was first published in December 1815."],
                     response="It was published in 1816.", reference="December 1815"),
    SingleTurnSample(user_input="Who is Mr. Knightley?", retrieved_contexts=["Highbury is a village.", "Hartfield is a house."],
                     response="A character in Pride and Prejudice.", reference="Emma's neighbour and, at the end, her husband"),
]
ds = EvaluationDataset(samples=samples)
scores = [
    {"faithfulness": 1.0, "answer_relevancy": 0.97, "llm_context_precision_with_reference": 0.9999999999, "context_recall": 1.0,
     "factual_correctness(mode=f1)": 0.67, "semantic_similarity": 0.91, "context_entity_recall": 1.0, "noise_sensitivity(mode=relevant)": 0.0},
    {"faithfulness": 0.0, "answer_relevancy": 0.95, "llm_context_precision_with_reference": 0.9999999999, "context_recall": 1.0,
     "factual_correctness(mode=f1)": 0.0, "semantic_similarity": 0.88, "context_entity_recall": 0.5, "noise_sensitivity(mode=relevant)": 1.0},
    {"faithfulness": math.nan, "answer_relevancy": 0.62, "llm_context_precision_with_reference": 0.0, "context_recall": 0.0,
     "factual_correctness(mode=f1)": 0.0, "semantic_similarity": 0.35, "context_entity_recall": 0.0, "noise_sensitivity(mode=relevant)": 0.0},
]
res = EvaluationResult(scores=scores, dataset=ds)
df = res.to_pandas()
out = sys.argv[1]
df.to_csv(out + "/ragas_result.csv")
df.to_json(out + "/ragas_result.json", orient="records")
df.to_json(out + "/ragas_result.jsonl", orient="records", lines=True)
df.to_parquet(out + "/ragas_result.parquet")
print(df.columns.tolist())
