//! Checks of the parsers of outside bytes, shared by the fuzz targets `npy`
//! and `dataset` (`fuzz/fuzz_targets/`) and the replay of their corpus and
//! findings (`tests/tests/fuzz_regressions.rs`). Each takes the raw bytes
//! libFuzzer produced and returns `Err(message)` when a contract is broken;
//! a panic (including integer overflow: the targets are built with `-a`)
//! or an allocation beyond libFuzzer's `-rss_limit_mb` is a finding too.

use mempursuit::npy::{parse_f32, parse_f32_matrix, Matrix};
use mempursuit::{InputPolicy, InvalidCandidates, Method, PursuitOptions};
use mempursuit_cli::dataset::{Dataset, DatasetBytes};
use mempursuit_cli::eval::{evaluate, EvalOptions, NamedMethod};

/// Separates the files of a `dataset` fuzz input: memory embeddings,
/// query embeddings, `queries.jsonl` and (optional) `memories.jsonl`.
pub const DATASET_SEPARATOR: &[u8] = b"\n#--mempursuit-fuzz--#\n";

/// Checks a parsed matrix against the bytes it came from: `rows × cols`
/// values, and they are the file's last `4·rows·cols` bytes read as
/// little- or big-endian f32 (bit for bit; an independent decode of the
/// data that npyz decoded).
fn check_matrix(m: &Matrix, bytes: &[u8], what: &str) -> Result<(), String> {
    let n = m
        .rows
        .checked_mul(m.cols)
        .ok_or(format!("{what}: rows × cols overflows"))?;
    if m.data.len() != n {
        return Err(format!(
            "{what}: {} values for {} × {}",
            m.data.len(),
            m.rows,
            m.cols
        ));
    }
    if n * 4 >= bytes.len() {
        return Err(format!(
            "{what}: {n} values from a file of {} bytes",
            bytes.len()
        ));
    }
    let tail = &bytes[bytes.len() - 4 * n..];
    let le = tail
        .chunks_exact(4)
        .zip(&m.data)
        .all(|(c, v)| f32::from_le_bytes([c[0], c[1], c[2], c[3]]).to_bits() == v.to_bits());
    let be = tail
        .chunks_exact(4)
        .zip(&m.data)
        .all(|(c, v)| f32::from_be_bytes([c[0], c[1], c[2], c[3]]).to_bits() == v.to_bits());
    if !(le || be) {
        return Err(format!("{what}: values differ from the file's data bytes"));
    }
    if m.rows > 0 {
        // Indexing the last row is in range.
        let _ = m.row(m.rows - 1);
    }
    Ok(())
}

/// The `npy` target: [`parse_f32`] and [`parse_f32_matrix`] on arbitrary
/// bytes return a matrix consistent with the bytes or an error with a
/// message; the matrix reader accepts exactly the 2-D arrays the general
/// reader accepts, with the same result.
///
/// # Errors
/// The broken contract.
pub fn check_npy(bytes: &[u8]) -> Result<(), String> {
    let any = parse_f32(bytes);
    let matrix = parse_f32_matrix(bytes);
    for (what, r) in [("parse_f32", &any), ("parse_f32_matrix", &matrix)] {
        match r {
            Ok(m) => check_matrix(m, bytes, what)?,
            Err(e) if e.to_string().is_empty() => return Err(format!("{what}: empty message")),
            Err(_) => {}
        }
    }
    // Compared bit for bit: the data may hold NaN.
    let same = |a: &Matrix, m: &Matrix| {
        (a.rows, a.cols) == (m.rows, m.cols)
            && a.data.len() == m.data.len()
            && a.data
                .iter()
                .zip(&m.data)
                .all(|(x, y)| x.to_bits() == y.to_bits())
    };
    match (&any, &matrix) {
        (Ok(a), Ok(m)) if !same(a, m) => Err("the two readers disagree".into()),
        (Err(_), Ok(_)) => Err("parse_f32_matrix accepts what parse_f32 refuses".into()),
        _ => Ok(()),
    }
}

/// The four files of a `dataset` fuzz input ([`split_dataset`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetParts<'a> {
    /// `memories.f32.npy` bytes.
    pub memory_embeddings: &'a [u8],
    /// `queries.f32.npy` bytes.
    pub query_embeddings: &'a [u8],
    /// `queries.jsonl` text (read lossily if not UTF-8).
    pub queries: String,
    /// `memories.jsonl` text, if the input has a fourth part.
    pub memories: Option<String>,
}

impl DatasetParts<'_> {
    /// The parts as [`Dataset::from_bytes`] takes them.
    pub fn bytes(&self) -> DatasetBytes<'_> {
        DatasetBytes {
            memory_embeddings: self.memory_embeddings,
            query_embeddings: self.query_embeddings,
            queries: &self.queries,
            memories: self.memories.as_deref(),
        }
    }
}

/// Splits a `dataset` fuzz input at [`DATASET_SEPARATOR`]: `None` unless it
/// has 3 or 4 parts.
pub fn split_dataset(bytes: &[u8]) -> Option<DatasetParts<'_>> {
    let mut parts = Vec::new();
    let mut rest = bytes;
    while let Some(at) = rest
        .windows(DATASET_SEPARATOR.len())
        .position(|w| w == DATASET_SEPARATOR)
    {
        parts.push(&rest[..at]);
        rest = &rest[at + DATASET_SEPARATOR.len()..];
    }
    parts.push(rest);
    if !(3..=4).contains(&parts.len()) {
        return None;
    }
    Some(DatasetParts {
        memory_embeddings: parts[0],
        query_embeddings: parts[1],
        queries: String::from_utf8_lossy(parts[2]).into_owned(),
        memories: parts
            .get(3)
            .map(|p| String::from_utf8_lossy(p).into_owned()),
    })
}

/// The `dataset` target: [`Dataset::from_bytes`] on the parts of
/// [`split_dataset`] returns an error with a message, or a dataset whose
/// invariants hold, whose every pool gathers, and on which [`evaluate`]
/// (top-K, MemPursuit, centroid pursuit with excluded rows, K = 1, 2, 5)
/// returns a report with metrics in [0, 1] or a typed error — never a
/// panic.
///
/// # Errors
/// The broken contract.
pub fn check_dataset(bytes: &[u8]) -> Result<(), String> {
    let Some(parts) = split_dataset(bytes) else {
        return Ok(());
    };
    let loaded = Dataset::from_bytes(parts.bytes());
    let data = match loaded {
        Err(e) if e.to_string().is_empty() => return Err("empty error message".into()),
        Err(_) => return Ok(()),
        Ok(d) => d,
    };
    let (n, d) = (data.memory_embeddings.rows, data.dim());
    if d == 0 || data.query_embeddings.cols != d || data.query_embeddings.rows != data.queries.len()
    {
        return Err(format!(
            "accepted inconsistent shapes: memories {n} × {d}, queries {} × {}, {} specs",
            data.query_embeddings.rows,
            data.query_embeddings.cols,
            data.queries.len()
        ));
    }
    let mut pool = Vec::new();
    for (i, q) in data.queries.iter().enumerate() {
        if q.pool.iter().any(|&id| id >= n) {
            return Err(format!("query {i}: pool id out of range"));
        }
        data.gather_pool(i, &mut pool);
        if pool.len() != q.pool.len() * d || data.query_embedding(i).len() != d {
            return Err(format!("query {i}: gathered {} values", pool.len()));
        }
    }
    let exclude = InputPolicy {
        invalid_candidates: InvalidCandidates::Exclude,
        ..InputPolicy::default()
    };
    let methods = [
        NamedMethod::new("top-K", Method::TopK(InputPolicy::default())),
        NamedMethod::new("MemPursuit", Method::Pursuit(PursuitOptions::default())),
        NamedMethod::new(
            "centroid",
            Method::Pursuit(PursuitOptions {
                input: exclude,
                ..PursuitOptions::centroid(0.5)
            }),
        ),
    ];
    if let Ok(report) = evaluate(&data, &methods, &EvalOptions::new(vec![1, 2, 5])) {
        for m in &report.methods {
            for b in &m.budgets {
                let o = b.overall;
                let ok = [o.evidence_recall, o.complete_coverage, o.group_coverage]
                    .iter()
                    .all(|x| (0.0..=1.0).contains(x));
                if !ok {
                    return Err(format!("{} K = {}: metrics {o:?}", m.name, b.k));
                }
            }
        }
    }
    Ok(())
}

/// The `spec` target: arbitrary bytes as the text form of a selector
/// specification (`mempursuit::SelectSpec`, what the JavaScript package and
/// the command line pass) and as its JSON form (what the conformance
/// vectors and the serde API take). Contracts: parsing never panics; a
/// parsed specification writes a text form that parses back to an equal
/// specification; building its method never panics and, when it succeeds,
/// runs on a small pool without panicking, with picks in range.
pub fn check_spec(bytes: &[u8]) -> Result<(), String> {
    use mempursuit::{CallData, Pool, SelectSpec, Selector};
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(());
    };
    let mut specs = Vec::new();
    if let Ok(spec) = text.parse::<SelectSpec>() {
        specs.push(spec);
    }
    if let Ok(spec) = serde_json::from_str::<SelectSpec>(text) {
        specs.push(spec);
    }
    for spec in specs {
        let written = spec.to_string();
        let again: SelectSpec = written
            .parse()
            .map_err(|e| format!("{text:?} wrote {written:?}, which does not parse: {e}"))?;
        if again != spec {
            return Err(format!(
                "{text:?} wrote {written:?}, which reads as {again:?}"
            ));
        }
        let json = serde_json::to_string(&spec).map_err(|e| e.to_string())?;
        let back: SelectSpec = serde_json::from_str(&json)
            .map_err(|e| format!("{text:?} wrote JSON {json}, which does not read: {e}"))?;
        if back != spec {
            return Err(format!("{text:?}: JSON {json} reads as {back:?}"));
        }
        if spec.method().is_err() {
            continue;
        }
        let s = std::f32::consts::FRAC_1_SQRT_2;
        let query = [s, s];
        let pool = [0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0];
        let scores = [0.3f32, 0.2, 0.1];
        let costs = [1.0f32, 2.0, 3.0];
        let mut selector = Selector::new();
        for relevance in [None, Some(&scores[..])] {
            for cost in [None, Some(&costs[..])] {
                let data = CallData::new(&query, Pool::F32(&pool))
                    .with_relevance(relevance)
                    .with_costs(cost);
                if let Ok(sel) = selector.select_spec(&spec, data, 2) {
                    if sel.picks.iter().any(|&i| i >= 3) || sel.picks.len() > 2 {
                        return Err(format!("{written}: picks {:?} out of range", sel.picks));
                    }
                    if let (Some(c), Some(total)) = (cost, spec.cost_budget()) {
                        let spent: f64 = sel.picks.iter().map(|&i| c[i] as f64).sum();
                        if spent > total {
                            return Err(format!("{written}: picks cost {spent} > {total}"));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}
