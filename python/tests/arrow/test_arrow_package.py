"""mempursuit.arrow is an optional part of the package: the ``arrow`` extra
brings pyarrow, ``import mempursuit`` imports neither pyarrow nor Ray, and
without them the Arrow and Ray tests skip with the reason shown."""

import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent


def test_arrow_extra_is_pyarrow():
    try:
        requires = importlib.metadata.requires("mempursuit") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("mempursuit is not installed as a distribution (pip install ./python)")
    arrow = [r for r in requires if re.search(r"""extra\s*==\s*['"]arrow['"]""", r)]
    assert [re.split(r"[<>=!~ ;]", r)[0] for r in arrow] == ["pyarrow"]
    base = [r for r in requires if "extra ==" not in r]
    assert [re.split(r"[<>=!~ ;]", r)[0] for r in base] == ["numpy"]


def test_importing_mempursuit_imports_no_pyarrow():
    code = (
        "import sys, mempursuit\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'ray', 'mempursuit.arrow'))\n"
        "assert not loaded and 'mempursuit.arrow' not in sys.modules, loaded\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


# Runs pytest with some modules made unimportable.
BLOCKED = """
import sys
import pytest

BLOCKED = {blocked!r}

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Block())
sys.exit(pytest.main({args!r}))
"""


def blocked_run(blocked, files, require=False):
    required = ("MEMPURSUIT_REQUIRE_INTEGRATIONS", "MEMPURSUIT_REQUIRE_RAY")
    env = {k: v for k, v in os.environ.items() if k not in required}
    # No third-party pytest plugins (langsmith's, hypothesis'): seconds of
    # imports per run, and nothing these files use.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if require:
        env.update((k, "1") for k in required)
    args = [str(HERE / f) for f in files] + ["-q", "-rs", "-p", "no:cacheprovider"]
    out = subprocess.run(
        [sys.executable, "-c", BLOCKED.format(blocked=blocked, args=args)],
        capture_output=True,
        text=True,
        cwd=HERE,
        env=env,
    )
    return out.returncode, out.stdout + out.stderr


def test_without_pyarrow_or_ray_the_tests_skip_with_a_reason():
    # Every module skips as a whole: pytest collects nothing (exit 5).
    rc, text = blocked_run(("pyarrow", "ray"), ["test_arrow_select.py", "test_arrow_ray.py"])
    assert rc == 5 and "2 skipped" in text and "passed" not in text and "failed" not in text, text
    assert "pyarrow is not installed (pip install './python[arrow]')" in text, text
    rc, text = blocked_run(("ray",), ["test_arrow_ray.py"])
    assert rc == 5 and "1 skipped" in text and "passed" not in text and "failed" not in text, text
    assert "ray is not installed (pip install 'ray[data]')" in text, text
    # Under MEMPURSUIT_REQUIRE_RAY=1 (CI with MEMPURSUIT_CI_RAY=1) a missing engine fails instead.
    rc, text = blocked_run(("ray",), ["test_arrow_ray.py"], require=True)
    assert rc not in (0, 5) and "ModuleNotFoundError" in text, text
