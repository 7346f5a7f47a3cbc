import pytest

from knorm.sensitivity import hull_cache


@pytest.fixture(autouse=True)
def hull_cache_dir(tmp_path, monkeypatch):
    """Every test gets its own empty hull cache (disk and memory): nothing is read from or written to ~/.cache."""
    monkeypatch.setenv(hull_cache.CACHE_ENV, str(tmp_path / "knorm-cache"))
    hull_cache.clear_memory()
    yield tmp_path / "knorm-cache" / "hulls"
    hull_cache.clear_memory()
