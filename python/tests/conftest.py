"""Shared fixtures: the repository's HotpotQA mini fixture, the Rust API's
reference orders and the demo's output.

The reference outputs come from the Rust crates of this repository, never
from committed copies:

* ``native_orders``: the JSON of ``cargo run -p mempursuit-wasm --example
  native_orders -- cli/data/hotpotqa-mini`` (the `mempursuit` crate's
  ``Selector`` on every fixture query, seeded synthetic pools and the
  embedded-check data);
* ``demo_output``: the text of ``cargo run -p mempursuit-cli -- demo``.

.ci/python.sh runs both commands and passes the files in the environment
variables MEMPURSUIT_NATIVE_ORDERS and MEMPURSUIT_DEMO_OUTPUT (with
MEMPURSUIT_REQUIRE_RUST=1, so that a missing file fails instead of
skipping). Without the variables the fixtures run cargo themselves when it
is on PATH, and skip the tests that need them when it is not.
"""

import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = REPO / "cli" / "data" / "hotpotqa-mini"


def _rust_output(env_var, cargo_args, tmp_path_factory, name):
    path = os.environ.get(env_var)
    if path:
        p = pathlib.Path(path)
        if not p.is_file():
            pytest.fail(f"{env_var}={path} does not exist")
        return p.read_text()
    if os.environ.get("MEMPURSUIT_REQUIRE_RUST") == "1":
        pytest.fail(f"{env_var} is not set but MEMPURSUIT_REQUIRE_RUST=1")
    if shutil.which("cargo") is None:
        pytest.skip(f"cargo not found and {env_var} not set")
    out = tmp_path_factory.mktemp("rust") / name
    with open(out, "w") as f:
        subprocess.run(["cargo", "run", "-q", *cargo_args], cwd=REPO, stdout=f, check=True)
    return out.read_text()


@pytest.fixture(scope="session")
def native_orders(tmp_path_factory):
    """The Rust API's picks (see the module docstring), parsed."""
    text = _rust_output(
        "MEMPURSUIT_NATIVE_ORDERS",
        ["-p", "mempursuit-wasm", "--example", "native_orders", "--", str(FIXTURE)],
        tmp_path_factory,
        "native-orders.json",
    )
    return json.loads(text)


@pytest.fixture(scope="session")
def demo_output(tmp_path_factory):
    """The text `mempursuit demo` prints."""
    return _rust_output(
        "MEMPURSUIT_DEMO_OUTPUT",
        ["-p", "mempursuit-cli", "--", "demo"],
        tmp_path_factory,
        "demo.txt",
    )


class Fixture:
    """The mini fixture: memory and query embeddings (float32, unit rows,
    d = 384) and the query specs (pool = memory ids, gold, gold_groups)."""

    def __init__(self, root):
        self.memories = np.load(root / "memories.f32.npy")
        self.queries = np.load(root / "queries.f32.npy")
        with open(root / "queries.jsonl") as f:
            self.specs = [json.loads(line) for line in f if line.strip()]

    def pool(self, i):
        """Query i's pool, (P, d) float32 C-contiguous (a gathered copy, as
        a vector store returns it)."""
        return self.memories[np.asarray(self.specs[i]["pool"])]


@pytest.fixture(scope="session")
def fixture():
    return Fixture(FIXTURE)


# --- the synthetic inputs of wasm/examples/common/mod.rs, bit for bit ---


def mulberry32_stream(seed, n):
    """The first n outputs of mulberry32 from `seed` (vectorized: the state
    after step i is seed + (i + 1) * 0x6D2B79F5 mod 2^32)."""
    with np.errstate(over="ignore"):
        a = (np.uint64(seed) + np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x6D2B79F5)) & np.uint64(
            0xFFFFFFFF
        )
        a = a.astype(np.uint32)
        t = (a ^ (a >> np.uint32(15))) * (np.uint32(1) | a)
        t = (t + (t ^ (t >> np.uint32(7))) * (np.uint32(61) | t)) ^ t
        return t ^ (t >> np.uint32(14))


def unit_vectors(stream, count, d):
    """`count` unit vectors of dimension d from consecutive draws: Irwin-Hall
    sums of 4 uniforms (exact in f64), the squared norm summed in order,
    one rounding to float32."""
    u = (stream[: count * d * 4] >> np.uint32(8)).astype(np.float64) / 16_777_216.0
    u = u.reshape(count, d, 4)
    v = ((u[..., 0] + u[..., 1]) + u[..., 2]) + u[..., 3] - 2.0
    ss = np.cumsum(v * v, axis=1)[:, -1]  # sequential, like the Rust loop
    return (v / np.sqrt(ss)[:, None]).astype(np.float32)


def synthetic_case(base_seed, c, p, d):
    """Case c: a query (d,) and a pool (p, d), as common::case."""
    stream = mulberry32_stream((base_seed + c) & 0xFFFFFFFF, (p + 1) * d * 4)
    vecs = unit_vectors(stream, p + 1, d)
    return vecs[0].copy(), np.ascontiguousarray(vecs[1:])


def xorshift_fill(state, n):
    """embedded-check's xorshift32 fill: n values in [-1, 1); returns
    (values as float32, new state)."""
    out = np.empty(n, dtype=np.float32)
    for i in range(n):
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        out[i] = np.float32(state >> 8) / np.float32(8_388_608.0) - np.float32(1.0)
    return out, state
