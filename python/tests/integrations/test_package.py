"""The integrations as optional parts of the package: the base package
depends on numpy only and imports no framework; each framework is an extra;
without a framework its tests skip with the reason shown."""

import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
FRAMEWORKS = ("haystack", "llama_index", "langchain_core", "langchain_classic", "langchain", "mem0")


def test_base_depends_on_numpy_only_and_extras_exist():
    try:
        requires = importlib.metadata.requires("mempursuit") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("mempursuit is not installed as a distribution (pip install ./python)")
    base = [r for r in requires if "extra ==" not in r]
    assert [re.split(r"[<>=!~ ;]", r)[0] for r in base] == ["numpy"]
    extras = {}
    for r in requires:
        m = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", r)
        if m:
            extras.setdefault(m.group(1), []).append(re.split(r"[<>=!~ ;]", r)[0])
    assert extras["haystack"] == ["haystack-ai"]
    assert extras["llama-index"] == ["llama-index-core"]
    assert extras["langchain"] == ["langchain-core"]
    assert extras["mem0"] == ["mem0ai"]


def test_importing_mempursuit_imports_no_framework():
    code = (
        "import sys, mempursuit, mempursuit.integrations\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r})\n"
        "assert not loaded, loaded\n"
        "assert issubclass(mempursuit.integrations.DocumentError, ValueError)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


# Runs pytest on the framework tests with the frameworks made unimportable.
BLOCKED = """
import sys
import pytest

BLOCKED = {frameworks!r}

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Block())
sys.exit(pytest.main({args!r}))
"""


def test_without_frameworks_the_tests_skip_with_a_reason():
    files = [
        str(HERE / f"test_{n}.py")
        for n in ("haystack", "llama_index", "langchain", "readme_integrations", "mem0", "async", "stores")
    ]
    args = [*files, "-q", "-rs", "-p", "no:cacheprovider"]
    env = {k: v for k, v in os.environ.items() if k != "MEMPURSUIT_REQUIRE_INTEGRATIONS"}
    out = subprocess.run(
        [sys.executable, "-c", BLOCKED.format(frameworks=FRAMEWORKS, args=args)],
        capture_output=True,
        text=True,
        cwd=HERE,
        env=env,
    )
    text = out.stdout + out.stderr
    assert out.returncode == 0, text  # all skipped: pytest exits 0
    assert "passed" not in text and "failed" not in text, text
    for reason in (
        "haystack is not installed (pip install './python[haystack]')",
        "llama_index.core is not installed (pip install './python[llama-index]')",
        "langchain_core is not installed (pip install './python[langchain]')",
        # mem0ai needs Python >= 3.10: test_mem0.py says so before importing it.
        "mem0 is not installed (pip install './python[mem0]')"
        if sys.version_info >= (3, 10)
        else "mem0ai needs Python >= 3.10",
    ):
        assert reason in text, text
    # Under MEMPURSUIT_REQUIRE_INTEGRATIONS=1 (CI) a missing framework fails instead.
    args = [files[0], "-q", "-p", "no:cacheprovider"]
    out = subprocess.run(
        [sys.executable, "-c", BLOCKED.format(frameworks=FRAMEWORKS, args=args)],
        capture_output=True,
        text=True,
        cwd=HERE,
        env=dict(env, MEMPURSUIT_REQUIRE_INTEGRATIONS="1"),
    )
    assert out.returncode != 0 and "ModuleNotFoundError" in out.stdout + out.stderr


def test_integration_errors_are_mempursuit_errors_and_pickle_with_their_kind():
    import pickle

    import mempursuit
    from mempursuit.integrations import DocumentError, OptionError

    assert issubclass(DocumentError, mempursuit.MemPursuitError) and issubclass(DocumentError, ValueError)
    assert issubclass(OptionError, mempursuit.MemPursuitError) and issubclass(OptionError, TypeError)
    assert DocumentError("x").kind == "input" and OptionError("x").kind == "option"
    for error in (
        DocumentError("document 1 (id 'a'): bad", "input", 1, "a", "embedding"),
        OptionError("R: unknown option 'x'"),
    ):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error)
        fields = ("kind", "index", "id", "argument")
        assert (str(again), *map(again.__getattribute__, fields)) == (str(error), *map(error.__getattribute__, fields))
    assert (DocumentError("d", "input", 1, "a", "embedding").index, OptionError("o").argument) == (1, None)
