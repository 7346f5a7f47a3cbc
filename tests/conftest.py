import numpy as np
import pytest

from tests.settings import SEED


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)
