"""The workspace store's settings: size caps by default, from the environment and from Streamlit's
secrets, and caps that refuse a save before anything is written."""

from __future__ import annotations

import pytest

from evalsuite.storage import open_store

from .helpers import SAMPLE_FILES, open_page, save_from, texts


def test_local_store_caps_default_and_configured(monkeypatch):
    at = open_page("data")
    assert "Files of up to 300 MiB each and 1,024 MiB per workspace can be saved." in texts(at.caption)
    monkeypatch.setenv("EVALSUITE_MAX_DATASET_MB", "5")
    monkeypatch.setenv("EVALSUITE_MAX_WORKSPACE_MB", "12")
    at = open_page("data")
    assert "Files of up to 5 MiB each and 12 MiB per workspace can be saved." in texts(at.caption)


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB ({n:,} bytes)"


def test_store_settings_from_secrets_and_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("EVALSUITE_DATA_DIR")
    secrets = {"evalsuite": {"data_dir": str(tmp_path / "from-secrets"), "max_dataset_mb": 7}}
    at = open_page("data", secrets=secrets)
    assert "Files of up to 7 MiB each and 1,024 MiB per workspace can be saved." in texts(at.caption)
    save_from(at, "data_share", "in the secrets' folder")
    with open_store(data_dir=tmp_path / "from-secrets") as store:
        assert store.usage().n_active_workspaces == 1
    monkeypatch.setenv("EVALSUITE_MAX_DATASET_MB", "5")  # the environment wins over the secrets
    at = open_page("data", secrets=secrets)
    assert "Files of up to 5 MiB each and 1,024 MiB per workspace can be saved." in texts(at.caption)


@pytest.mark.parametrize("cap", ["dataset", "workspace"])
def test_size_caps_refuse_before_anything_is_written(monkeypatch, store_dir, cap):
    sizes = {path.name: path.stat().st_size for _, path, _ in SAMPLE_FILES}
    largest = max(sizes, key=sizes.get)
    assert largest == "ragtruth_qa.jsonl" and 2**20 < sizes[largest] < 2 * 2**20 and 4 * 2**20 < sum(sizes.values())
    if cap == "dataset":  # 1 MiB: only the largest file is over
        settings = {"EVALSUITE_MAX_DATASET_MB": "1"}
        expected = (f"ragtruth_qa.jsonl: this records file is {_mib(sizes[largest])}; the workspace store keeps at "
                    f"most {_mib(2**20)} per file")
    else:  # 4 MiB: every file fits, all of them together do not
        settings = {"EVALSUITE_MAX_WORKSPACE_MB": "4"}
        expected = (f"this session: the files of this session come to {_mib(sum(sizes.values()))}; the workspace "
                    f"store keeps at most {_mib(4 * 2**20)} per workspace")
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    at = open_page("data")
    at.text_input(key="data_share_name").input("too big")
    at.button(key="data_share_submit").click().run()
    errors = texts(at.error)
    assert len(errors) == 1 and errors[0].startswith(expected), errors
    assert not at.code
    with open_store(data_dir=store_dir) as store:
        usage = store.usage()
    assert usage.n_datasets == 0 and usage.n_active_workspaces == 0
