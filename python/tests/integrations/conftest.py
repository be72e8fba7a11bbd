"""Fixtures of the framework integration tests (see _data.py)."""

import pytest

from _data import Data


@pytest.fixture(scope="session")
def data():
    return Data()
