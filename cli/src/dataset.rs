//! Evidence-selection datasets: queries with candidate pools and gold
//! evidence, plus the embeddings of queries and memories.
//!
//! A dataset is four files, the layout of the HotpotQA fixture shipped in
//! `cli/data/hotpotqa-mini/`:
//!
//! | file | content |
//! | --- | --- |
//! | `memories.f32.npy` | N × d float32, row i = the embedding of memory id i |
//! | `queries.f32.npy` | Q × d float32, row i = the embedding of `queries.jsonl` line i |
//! | `queries.jsonl` | one [`QuerySpec`] per line: pool, gold, gold groups, optional first-stage relevance |
//! | `memories.jsonl` | optional: one [`Memory`] per line, line i has `id` = i (texts, scopes, and the evidence units each memory contains) |
//!
//! Memory ids are row indices of the memory matrix. Loading validates
//! everything the evaluation relies on (ids in range, gold ids valid, one
//! embedding row per query, equal dimensions, relevance aligned with the
//! pool) and reports the first problem with the file, the 1-based line and
//! the offending id. Vector norms are not checked here: the selectors check
//! them per call ([`mempursuit::Error`]).
//!
//! ```
//! use mempursuit_cli::dataset::Dataset;
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/hotpotqa-mini");
//! let data = Dataset::load_dir(dir)?;
//! assert_eq!((data.queries.len(), data.dim()), (24, 384));
//! let mut pool = Vec::new();
//! data.gather_pool(0, &mut pool); // P × d, row-major
//! assert_eq!(pool.len(), data.queries[0].pool.len() * data.dim());
//! # Ok::<(), mempursuit_cli::dataset::DatasetError>(())
//! ```
//!

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use mempursuit::npy::{self, Matrix};

/// One memory (a line of `memories.jsonl`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// Memory id: the row of the memory embedding matrix (line i has id i).
    pub id: usize,
    /// The text that was embedded.
    pub text: String,
    /// The evidence group (e.g. the source paragraph); memories of one group
    /// state or elaborate the same piece of evidence. Empty if absent.
    #[serde(default)]
    pub group: String,
    /// Where the memory comes from (free-form; e.g. `"<title>#<sentence>"`).
    /// Empty if absent.
    #[serde(default)]
    pub source: String,
    /// Optional scope (e.g. a user or conversation id) for pools built by
    /// retrieval: a query with a scope only retrieves memories of that
    /// scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Optional: the ids of the evidence units this memory contains (e.g.
    /// the sentences of an overlapping chunk; JSON field `units`, or
    /// `sentences` as in the HotpotQA overlap fixtures). Unit ids are free
    /// integers (not memory ids). With [`QuerySpec::gold_units`] they give
    /// the evaluation's unit measures: a memory without units covers none.
    #[serde(default, alias = "sentences", skip_serializing_if = "Option::is_none")]
    pub units: Option<Vec<usize>>,
}

/// One query (a line of `queries.jsonl`): its candidate pool and gold
/// evidence, by memory id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuerySpec {
    /// Query id (a string, e.g. the HotpotQA `_id`).
    pub id: String,
    /// The query text (for display). Empty if absent.
    #[serde(default)]
    pub text: String,
    /// The query type used for per-type metrics (e.g. `bridge`,
    /// `comparison`); JSON field `type`. Empty if absent.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The reference answer (for display only), if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The candidate pool: distinct memory ids, in the order given (pool
    /// position p is row p of the gathered P × d matrix). May be absent
    /// (empty) when the evaluation builds pools itself
    /// ([`EvalOptions::retrieve`](crate::eval::EvalOptions::retrieve)).
    #[serde(default)]
    pub pool: Vec<usize>,
    /// The gold memory ids: distinct, non-empty, valid memory ids. Gold
    /// outside `pool` is allowed and counts as a miss (a first stage can miss
    /// evidence); the evaluation reports the pool's recall ceiling.
    pub gold: Vec<usize>,
    /// The gold evidence split into groups (e.g. one per gold paragraph):
    /// each non-empty and a subset of `gold`. A query counts as group-covered
    /// when every group has at least one selected member. May be empty or
    /// absent: such a query is left out of group coverage (not counted as
    /// covered).
    #[serde(default)]
    pub gold_groups: Vec<Vec<usize>>,
    /// Optional scope (e.g. a user or conversation id). When the evaluation
    /// builds pools itself, a query's pool holds only memories whose
    /// [`Memory::scope`] equals this value; absent means every memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Optional first-stage relevance scores aligned with `pool` (finite
    /// f32, one per pool entry). Used as ρ by the evaluation when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<Vec<f32>>,
    /// Optional: the gold evidence units (ids in the space of
    /// [`Memory::units`]; JSON field `gold_units`, or `gold_sentences` as in
    /// the HotpotQA overlap fixtures): distinct, non-empty when given. When
    /// memories list the units they contain, the evaluation reports unit
    /// recall (the share of these units inside the picks) beside the
    /// memory-level measures, which count a memory that repeats an
    /// already-picked unit as new evidence.
    #[serde(
        default,
        alias = "gold_sentences",
        skip_serializing_if = "Option::is_none"
    )]
    pub gold_units: Option<Vec<usize>>,
}

/// A loaded, validated dataset.
///
/// Invariants (checked by every constructor): every id in every query's
/// `pool` is `< memory_embeddings.rows`, pools hold distinct ids, `gold` is
/// non-empty, distinct and holds valid memory ids (not necessarily in
/// `pool`), every gold group is non-empty and
/// ⊆ `gold`, `relevance` (if present) has one finite value per pool entry,
/// `query_embeddings.rows == queries.len()`, both matrices have the same
/// number of columns d ≥ 1, and `memories` (if present) has one entry per
/// memory row with `id` equal to its line index.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Memory embeddings, N × d row-major f32 (row i = memory id i).
    pub memory_embeddings: Matrix,
    /// Query embeddings, Q × d row-major f32 (row i = `queries[i]`).
    pub query_embeddings: Matrix,
    /// The queries, in file order.
    pub queries: Vec<QuerySpec>,
    /// The memories' texts and groups, if `memories.jsonl` was loaded.
    pub memories: Option<Vec<Memory>>,
}

/// Paths of a dataset's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetPaths {
    /// N × d memory embeddings (`memories.f32.npy`).
    pub memory_embeddings: PathBuf,
    /// Q × d query embeddings (`queries.f32.npy`).
    pub query_embeddings: PathBuf,
    /// Query specs (`queries.jsonl`).
    pub queries: PathBuf,
    /// Memory texts (`memories.jsonl`), optional.
    pub memories: Option<PathBuf>,
}

impl DatasetPaths {
    /// The standard file names in `dir`: `memories.f32.npy`,
    /// `queries.f32.npy`, `queries.jsonl`, and `memories.jsonl` if that file
    /// exists.
    pub fn in_dir(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        let memories = dir.join("memories.jsonl");
        DatasetPaths {
            memory_embeddings: dir.join("memories.f32.npy"),
            query_embeddings: dir.join("queries.f32.npy"),
            queries: dir.join("queries.jsonl"),
            memories: memories.is_file().then_some(memories),
        }
    }
}

/// The contents of a dataset's files, e.g. embedded with `include_bytes!`.
#[derive(Debug, Clone, Copy)]
pub struct DatasetBytes<'a> {
    /// `memories.f32.npy` bytes (NumPy format, f32, C order).
    pub memory_embeddings: &'a [u8],
    /// `queries.f32.npy` bytes.
    pub query_embeddings: &'a [u8],
    /// `queries.jsonl` text.
    pub queries: &'a str,
    /// `memories.jsonl` text, optional.
    pub memories: Option<&'a str>,
}

/// Why a dataset could not be loaded. The messages name the file, the
/// 1-based line (for JSONL files) and the offending id or value.
#[derive(Debug)]
#[non_exhaustive]
pub enum DatasetError {
    /// A file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A `.npy` file is not a 2-D float32 array in C order, or is malformed
    /// or truncated (the message is [`mempursuit::npy::NpyError`]'s: what is
    /// wrong and what to do).
    Npy {
        /// The file (its path or name).
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A JSONL line is not valid JSON or lacks a required field.
    Json {
        /// The file (its path or name).
        file: String,
        /// 1-based line number.
        line: usize,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// The files parse but break an invariant of [`Dataset`].
    Invalid {
        /// The file (its path or name) the problem is attributed to.
        file: String,
        /// 1-based line number, if the problem is on one line.
        line: Option<usize>,
        /// What is wrong, naming the offending id or value.
        message: String,
    },
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatasetError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            DatasetError::Npy { file, message } => write!(f, "{file}: {message}"),
            DatasetError::Json { file, line, source } => write!(f, "{file} line {line}: {source}"),
            DatasetError::Invalid {
                file,
                line: Some(line),
                message,
            } => write!(f, "{file} line {line}: {message}"),
            DatasetError::Invalid {
                file,
                line: None,
                message,
            } => write!(f, "{file}: {message}"),
        }
    }
}

impl std::error::Error for DatasetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DatasetError::Io { source, .. } => Some(source),
            DatasetError::Json { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Display names of the four files, for error messages.
struct Names {
    memory_embeddings: String,
    query_embeddings: String,
    queries: String,
    memories: String,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            memory_embeddings: "memories.f32.npy".into(),
            query_embeddings: "queries.f32.npy".into(),
            queries: "queries.jsonl".into(),
            memories: "memories.jsonl".into(),
        }
    }
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, DatasetError> {
    std::fs::read(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn read_text(path: &Path) -> Result<String, DatasetError> {
    std::fs::read_to_string(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses `.npy` bytes holding a 2-D f32 array in C order with
/// [`mempursuit::npy::parse_f32_matrix`] (the one `.npy` reader; a 1-D array
/// is refused: an embedding file is N × d). `file` names the source in
/// errors.
fn parse_npy(bytes: &[u8], file: &str) -> Result<Matrix, DatasetError> {
    npy::parse_f32_matrix(bytes).map_err(|e| DatasetError::Npy {
        file: file.to_string(),
        message: e.to_string(),
    })
}

fn parse_jsonl<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
) -> Result<Vec<T>, DatasetError> {
    // A UTF-8 byte-order mark (written by some Windows tools) is not part
    // of the first line; blank lines at the end of the file are ignored.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let used = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let mut out = Vec::with_capacity(used);
    for (i, line) in lines[..used].iter().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            return Err(DatasetError::Invalid {
                file: file.to_string(),
                line: Some(line_no),
                message: "empty line (line i must describe item i)".into(),
            });
        }
        let item = serde_json::from_str(line).map_err(|source| DatasetError::Json {
            file: file.to_string(),
            line: line_no,
            source,
        })?;
        out.push(item);
    }
    Ok(out)
}

/// Parses `queries.jsonl` text: one [`QuerySpec`] per line, no empty lines
/// between items. A leading UTF-8 byte-order mark and blank lines at the
/// end are ignored.
/// Only the syntax is checked here; [`Dataset::from_parts`] validates ids.
///
/// # Errors
/// [`DatasetError::Json`] naming `file` and the 1-based line, or
/// [`DatasetError::Invalid`] for an empty line.
pub fn parse_queries(text: &str, file: &str) -> Result<Vec<QuerySpec>, DatasetError> {
    parse_jsonl(text, file)
}

/// Parses `memories.jsonl` text: one [`Memory`] per line, no empty lines
/// between items (a leading byte-order mark and trailing blank lines are
/// ignored).
///
/// # Errors
/// As [`parse_queries`].
pub fn parse_memories(text: &str, file: &str) -> Result<Vec<Memory>, DatasetError> {
    parse_jsonl(text, file)
}

impl Dataset {
    /// Loads the standard files of `dir` ([`DatasetPaths::in_dir`]).
    ///
    /// # Errors
    /// See [`Dataset::load`].
    pub fn load_dir(dir: impl AsRef<Path>) -> Result<Dataset, DatasetError> {
        Self::load(&DatasetPaths::in_dir(dir))
    }

    /// Loads and validates the files at `paths`.
    ///
    /// # Errors
    /// [`DatasetError::Io`] if a file cannot be read, [`DatasetError::Npy`] /
    /// [`DatasetError::Json`] if one does not parse, and
    /// [`DatasetError::Invalid`] if the contents break an invariant of
    /// [`Dataset`] (each message names the file, line and offending id).
    pub fn load(paths: &DatasetPaths) -> Result<Dataset, DatasetError> {
        let names = Names {
            memory_embeddings: paths.memory_embeddings.display().to_string(),
            query_embeddings: paths.query_embeddings.display().to_string(),
            queries: paths.queries.display().to_string(),
            memories: paths
                .memories
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        };
        let queries = parse_queries(&read_text(&paths.queries)?, &names.queries)?;
        let memory_embeddings = parse_npy(
            &read_bytes(&paths.memory_embeddings)?,
            &names.memory_embeddings,
        )?;
        let query_embeddings = parse_npy(
            &read_bytes(&paths.query_embeddings)?,
            &names.query_embeddings,
        )?;
        let memories = match &paths.memories {
            Some(p) => Some(parse_memories(&read_text(p)?, &names.memories)?),
            None => None,
        };
        Self::build(
            memory_embeddings,
            query_embeddings,
            queries,
            memories,
            &names,
        )
    }

    /// Parses and validates a dataset held in memory (e.g. embedded in a
    /// binary with `include_bytes!` / `include_str!`). Errors name the
    /// standard file names (`queries.jsonl`, ...).
    ///
    /// # Errors
    /// As [`Dataset::load`], without [`DatasetError::Io`].
    pub fn from_bytes(bytes: DatasetBytes<'_>) -> Result<Dataset, DatasetError> {
        let names = Names::default();
        let queries = parse_queries(bytes.queries, &names.queries)?;
        let memory_embeddings = parse_npy(bytes.memory_embeddings, &names.memory_embeddings)?;
        let query_embeddings = parse_npy(bytes.query_embeddings, &names.query_embeddings)?;
        let memories = match bytes.memories {
            Some(t) => Some(parse_memories(t, &names.memories)?),
            None => None,
        };
        Self::build(
            memory_embeddings,
            query_embeddings,
            queries,
            memories,
            &names,
        )
    }

    /// Validates parts already in memory and assembles a dataset. Query `i`
    /// is reported as `queries.jsonl line i+1`.
    ///
    /// # Errors
    /// [`DatasetError::Invalid`] if the parts break an invariant of
    /// [`Dataset`].
    pub fn from_parts(
        memory_embeddings: Matrix,
        query_embeddings: Matrix,
        queries: Vec<QuerySpec>,
        memories: Option<Vec<Memory>>,
    ) -> Result<Dataset, DatasetError> {
        Self::build(
            memory_embeddings,
            query_embeddings,
            queries,
            memories,
            &Names::default(),
        )
    }

    fn build(
        memory_embeddings: Matrix,
        query_embeddings: Matrix,
        queries: Vec<QuerySpec>,
        memories: Option<Vec<Memory>>,
        names: &Names,
    ) -> Result<Dataset, DatasetError> {
        let invalid = |file: &str, line: Option<usize>, message: String| DatasetError::Invalid {
            file: file.to_string(),
            line,
            message,
        };
        for (m, file) in [
            (&memory_embeddings, &names.memory_embeddings),
            (&query_embeddings, &names.query_embeddings),
        ] {
            if m.rows.checked_mul(m.cols) != Some(m.data.len()) {
                return Err(invalid(
                    file,
                    None,
                    format!(
                        "holds {} values, but {} rows × {} columns need {}",
                        m.data.len(),
                        m.rows,
                        m.cols,
                        m.rows.saturating_mul(m.cols)
                    ),
                ));
            }
        }
        let n = memory_embeddings.rows;
        let d = memory_embeddings.cols;
        if d == 0 {
            return Err(invalid(
                &names.memory_embeddings,
                None,
                "embedding dimension is 0".into(),
            ));
        }
        if query_embeddings.cols != d {
            return Err(invalid(
                &names.query_embeddings,
                None,
                format!(
                    "query dimension {} differs from the memory dimension {d} ({})",
                    query_embeddings.cols, names.memory_embeddings
                ),
            ));
        }
        if query_embeddings.rows != queries.len() {
            return Err(invalid(
                &names.query_embeddings,
                None,
                format!(
                    "has {} rows but {} has {} queries (row i must embed line i)",
                    query_embeddings.rows,
                    names.queries,
                    queries.len()
                ),
            ));
        }
        if let Some(mems) = &memories {
            if mems.len() != n {
                return Err(invalid(
                    &names.memories,
                    None,
                    format!(
                        "has {} memories but {} has {n} rows",
                        mems.len(),
                        names.memory_embeddings
                    ),
                ));
            }
            if let Some((i, m)) = mems.iter().enumerate().find(|(i, m)| m.id != *i) {
                return Err(invalid(
                    &names.memories,
                    Some(i + 1),
                    format!("id {} should be {i} (line i+1 must have id i)", m.id),
                ));
            }
        }
        let mut seen = HashSet::new();
        for (i, q) in queries.iter().enumerate() {
            let bad = |message: String| {
                invalid(
                    &names.queries,
                    Some(i + 1),
                    format!("query {:?}: {message}", q.id),
                )
            };
            seen.clear();
            for &id in &q.pool {
                if id >= n {
                    return Err(bad(format!(
                        "pool memory id {id} is out of range ({} has {n} rows)",
                        names.memory_embeddings
                    )));
                }
                if !seen.insert(id) {
                    return Err(bad(format!("pool lists memory id {id} twice")));
                }
            }
            if q.gold.is_empty() {
                return Err(bad("gold is empty (recall is undefined)".into()));
            }
            let mut gold_seen = HashSet::new();
            for &id in &q.gold {
                // Gold outside the pool is allowed (a first stage can miss
                // it): it counts as a miss, and the evaluation reports the
                // pool's own recall ceiling.
                if id >= n {
                    return Err(bad(format!(
                        "gold memory id {id} is out of range ({} has {n} rows)",
                        names.memory_embeddings
                    )));
                }
                if !gold_seen.insert(id) {
                    return Err(bad(format!("gold lists memory id {id} twice")));
                }
            }
            for (g, group) in q.gold_groups.iter().enumerate() {
                if group.is_empty() {
                    return Err(bad(format!("gold group {g} is empty")));
                }
                if let Some(id) = group.iter().find(|id| !gold_seen.contains(id)) {
                    return Err(bad(format!(
                        "gold group {g} lists memory id {id}, which is not in gold"
                    )));
                }
            }
            if let Some(units) = &q.gold_units {
                if units.is_empty() {
                    return Err(bad(
                        "gold_units is empty (leave the field out when the query has none)".into(),
                    ));
                }
                let mut unit_seen = HashSet::new();
                if let Some(u) = units.iter().find(|u| !unit_seen.insert(**u)) {
                    return Err(bad(format!("gold_units lists unit {u} twice")));
                }
                if memories.is_none() {
                    return Err(bad(format!(
                        "gold_units are given but there is no {} to say which units each \
                         memory contains (its `units` or `sentences` field)",
                        names.memories
                    )));
                }
            }
            if let Some(r) = &q.relevance {
                if r.len() != q.pool.len() {
                    return Err(bad(format!(
                        "relevance has {} values but the pool has {}",
                        r.len(),
                        q.pool.len()
                    )));
                }
                if let Some((p, v)) = r.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                    return Err(bad(format!("relevance {p} is not finite ({v})")));
                }
            }
        }
        Ok(Dataset {
            memory_embeddings,
            query_embeddings,
            queries,
            memories,
        })
    }

    /// The embedding dimension d.
    pub fn dim(&self) -> usize {
        self.memory_embeddings.cols
    }

    /// The embedding of query `index` (d values).
    ///
    /// # Panics
    /// If `index >= self.queries.len()`.
    pub fn query_embedding(&self, index: usize) -> &[f32] {
        self.query_embeddings.row(index)
    }

    /// Writes the embeddings of query `index`'s pool into `out` as one
    /// contiguous row-major P × d f32 matrix (row p = memory `pool[p]`).
    /// `out` is cleared first and reused, so a loop over queries allocates
    /// only when a pool is larger than any before.
    ///
    /// # Panics
    /// If `index >= self.queries.len()`.
    pub fn gather_pool(&self, index: usize, out: &mut Vec<f32>) {
        gather_rows(&self.memory_embeddings, &self.queries[index].pool, out);
    }

    /// The text of memory `id`, if `memories.jsonl` was loaded and `id` is
    /// in range.
    pub fn memory_text(&self, id: usize) -> Option<&str> {
        self.memory(id).map(|m| m.text.as_str())
    }

    /// Memory `id`, if `memories.jsonl` was loaded and `id` is in range.
    pub fn memory(&self, id: usize) -> Option<&Memory> {
        self.memories.as_ref().and_then(|m| m.get(id))
    }

    /// The evidence units memory `id` contains ([`Memory::units`]; empty
    /// when it lists none or `memories.jsonl` was not loaded).
    pub fn memory_units(&self, id: usize) -> &[usize] {
        self.memory(id)
            .and_then(|m| m.units.as_deref())
            .unwrap_or(&[])
    }

    /// Whether the evaluation can measure over evidence units: some query
    /// has [`QuerySpec::gold_units`] (which requires `memories.jsonl`).
    pub fn has_units(&self) -> bool {
        self.queries.iter().any(|q| q.gold_units.is_some())
    }
}

/// Copies rows `ids` of `matrix` into `out` (cleared first) as a contiguous
/// row-major `ids.len()` × `matrix.cols` f32 matrix.
///
/// # Panics
/// If an id is `>= matrix.rows`.
pub fn gather_rows(matrix: &Matrix, ids: &[usize], out: &mut Vec<f32>) {
    out.clear();
    out.reserve(ids.len() * matrix.cols);
    for &id in ids {
        out.extend_from_slice(matrix.row(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mat(rows: usize, cols: usize) -> Matrix {
        Matrix {
            data: (0..rows * cols).map(|v| v as f32).collect(),
            rows,
            cols,
        }
    }

    fn spec(line: &str) -> Vec<QuerySpec> {
        parse_queries(line, "queries.jsonl").unwrap()
    }

    #[test]
    fn gathers_pool_rows_in_pool_order() {
        let q = spec(r#"{"id":"a","pool":[2,0],"gold":[0],"gold_groups":[[0]]}"#);
        let d = Dataset::from_parts(mat(3, 2), mat(1, 2), q, None).unwrap();
        let mut buf = vec![9.0; 7];
        d.gather_pool(0, &mut buf);
        assert_eq!(buf, vec![4.0, 5.0, 0.0, 1.0]);
        assert_eq!(d.queries[0].kind, "");
        assert_eq!(d.queries[0].relevance, None);
    }

    #[test]
    fn accepts_gold_outside_pool_but_rejects_out_of_range_gold() {
        // Gold outside the pool is valid (a first stage can miss it).
        let text = "{\"id\":\"a\",\"pool\":[0],\"gold\":[0],\"gold_groups\":[[0]]}\n\
                    {\"id\":\"b\",\"pool\":[0,1],\"gold\":[2],\"gold_groups\":[[2]]}\n";
        let d = Dataset::from_parts(mat(3, 2), mat(2, 2), spec(text), None).unwrap();
        assert_eq!(d.queries[1].gold, vec![2]);
        // Gold and groups may be given without a pool or groups.
        let text = "{\"id\":\"a\",\"gold\":[1]}\n";
        let d = Dataset::from_parts(mat(3, 2), mat(1, 2), spec(text), None).unwrap();
        assert!(d.queries[0].pool.is_empty() && d.queries[0].gold_groups.is_empty());
        // A gold id beyond the memory rows is still an error.
        let text = "{\"id\":\"a\",\"pool\":[0],\"gold\":[0]}\n\
                    {\"id\":\"b\",\"pool\":[0,1],\"gold\":[3],\"gold_groups\":[[3]]}\n";
        let e = Dataset::from_parts(mat(3, 2), mat(2, 2), spec(text), None).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("queries.jsonl line 2"), "{msg}");
        assert!(msg.contains("gold memory id 3 is out of range"), "{msg}");
    }

    #[test]
    fn rejects_out_of_range_pool_id_and_bad_relevance() {
        let q = spec(r#"{"id":"a","pool":[0,7],"gold":[0],"gold_groups":[[0]]}"#);
        let e = Dataset::from_parts(mat(3, 2), mat(1, 2), q, None).unwrap_err();
        assert!(e.to_string().contains("pool memory id 7 is out of range"));
        let q = spec(r#"{"id":"a","pool":[0,1],"gold":[0],"gold_groups":[[0]],"relevance":[1.0]}"#);
        let e = Dataset::from_parts(mat(3, 2), mat(1, 2), q, None).unwrap_err();
        assert!(e
            .to_string()
            .contains("relevance has 1 values but the pool has 2"));
    }

    #[test]
    fn rejects_dimension_and_row_mismatch() {
        let q = spec(r#"{"id":"a","pool":[0],"gold":[0],"gold_groups":[[0]]}"#);
        let e = Dataset::from_parts(mat(3, 2), mat(1, 3), q.clone(), None).unwrap_err();
        assert!(e.to_string().contains("query dimension 3 differs"));
        let e = Dataset::from_parts(mat(3, 2), mat(2, 2), q, None).unwrap_err();
        assert!(e
            .to_string()
            .contains("has 2 rows but queries.jsonl has 1 queries"));
    }

    #[test]
    fn json_errors_name_the_line() {
        let e = parse_queries(
            "{\"id\":\"a\",\"pool\":[0],\"gold\":[0],\"gold_groups\":[[0]]}\n{\"id\":\"b\"}\n",
            "q.jsonl",
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("q.jsonl line 2: missing field"), "{msg}");
    }

    #[test]
    fn npy_round_trip_and_garbage() {
        use npyz::WriterBuilder;
        let mut buf = Vec::new();
        {
            let mut w = npyz::WriteOptions::<f32>::new()
                .default_dtype()
                .shape(&[2, 3])
                .writer(&mut buf)
                .begin_nd()
                .unwrap();
            w.extend([1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
            w.finish().unwrap();
        }
        let m = parse_npy(&buf, "x.npy").unwrap();
        assert_eq!((m.rows, m.cols), (2, 3));
        assert_eq!(m.row(1), &[4.0, 5.0, 6.0]);
        let e = parse_npy(b"not numpy", "x.npy").unwrap_err();
        assert!(e.to_string().starts_with("x.npy: not an .npy file"), "{e}");
    }

    fn npy_file(shape: &[u64], values: &[f32]) -> Vec<u8> {
        use npyz::WriterBuilder;
        let mut buf = Vec::new();
        let mut w = npyz::WriteOptions::<f32>::new()
            .default_dtype()
            .shape(shape)
            .writer(&mut buf)
            .begin_nd()
            .unwrap();
        w.extend(values.iter().copied()).unwrap();
        w.finish().unwrap();
        buf
    }

    const ONE_QUERY: &str = r#"{"id":"a","pool":[0,1],"gold":[1],"gold_groups":[[1]]}"#;

    #[test]
    fn jsonl_with_byte_order_mark_and_trailing_blank_lines() {
        let text = format!(
            "\u{feff}{ONE_QUERY}\r\n{}\n\n  \r\n\n",
            ONE_QUERY.replace("\"a\"", "\"b\"")
        );
        let q = parse_queries(&text, "queries.jsonl").unwrap();
        assert_eq!(q.len(), 2);
        assert_eq!((q[0].id.as_str(), q[1].id.as_str()), ("a", "b"));
        let m = parse_memories("\u{feff}{\"id\":0,\"text\":\"x\"}\n\n", "m.jsonl").unwrap();
        assert_eq!(m[0].text, "x");
        // A blank line between items still breaks "line i is item i".
        let e = parse_queries(&format!("{ONE_QUERY}\n\n{ONE_QUERY}\n"), "q.jsonl").unwrap_err();
        assert_eq!(
            e.to_string(),
            "q.jsonl line 2: empty line (line i must describe item i)"
        );
        assert!(parse_queries("", "q.jsonl").unwrap().is_empty());
    }

    #[test]
    fn from_bytes_refuses_hostile_npy_naming_the_file() {
        let mem = npy_file(&[2, 3], &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        let qry = npy_file(&[1, 3], &[1.0, 0.0, 0.0]);
        let ok = DatasetBytes {
            memory_embeddings: &mem,
            query_embeddings: &qry,
            queries: ONE_QUERY,
            memories: None,
        };
        assert_eq!(Dataset::from_bytes(ok).unwrap().dim(), 3);
        // Shape (d,) for the memories: not silently one memory.
        let vector = npy_file(&[3], &[1.0, 0.0, 0.0]);
        let e = Dataset::from_bytes(DatasetBytes {
            memory_embeddings: &vector,
            ..ok
        })
        .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("memories.f32.npy: expected a 2-D array (rows, d), got shape (3,)"),
            "{msg}"
        );
        // Truncated memories: the count of values, named.
        let e = Dataset::from_bytes(DatasetBytes {
            memory_embeddings: &mem[..mem.len() - 8],
            ..ok
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "memories.f32.npy: truncated file: header says 6 values, file holds 4 \
             (re-save the array with np.save)"
        );
        // A shape whose element count wraps u64 (2^32 × 2^32): it loaded as
        // an empty matrix of 2^32 rows before, and gathering a pool panicked.
        let mut wrap = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
        let header =
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }";
        wrap.extend_from_slice(format!("{header:<117}\n").as_bytes());
        let e = Dataset::from_bytes(DatasetBytes {
            memory_embeddings: &wrap,
            ..ok
        })
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("has more elements than this machine can address"),
            "{e}"
        );
        // A 12-byte file announcing a 4 GiB header.
        let e = Dataset::from_bytes(DatasetBytes {
            query_embeddings: b"\x93NUMPY\x02\x00\xff\xff\xff\xff",
            ..ok
        })
        .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "queries.f32.npy: malformed .npy header: the preamble gives a header of 4294967295 bytes"
            ),
            "{e}"
        );
    }

    /// Units: `sentences` / `gold_sentences` are read as units; gold units
    /// need memories.jsonl, and may not repeat or be empty.
    #[test]
    fn gold_units_are_validated() {
        let m = parse_memories(
            "{\"id\":0,\"text\":\"a\",\"sentences\":[4,5]}\n{\"id\":1,\"text\":\"b\"}\n",
            "m.jsonl",
        )
        .unwrap();
        assert_eq!(
            (m[0].units.as_deref(), m[1].units.as_deref()),
            (Some(&[4, 5][..]), None)
        );
        let q = spec(r#"{"id":"a","pool":[0,1],"gold":[0],"gold_sentences":[5]}"#);
        assert_eq!(q[0].gold_units, Some(vec![5]));
        let d = Dataset::from_parts(mat(2, 2), mat(1, 2), q.clone(), Some(m.clone())).unwrap();
        assert!(d.has_units());
        assert_eq!(
            (d.memory_units(0), d.memory_units(1)),
            (&[4, 5][..], &[][..])
        );
        let e = Dataset::from_parts(mat(2, 2), mat(1, 2), q, None).unwrap_err();
        assert!(
            e.to_string()
                .contains("gold_units are given but there is no memories.jsonl"),
            "{e}"
        );
        for (line, want) in [
            (
                r#"{"id":"a","pool":[0],"gold":[0],"gold_units":[3,3]}"#,
                "gold_units lists unit 3 twice",
            ),
            (
                r#"{"id":"a","pool":[0],"gold":[0],"gold_units":[]}"#,
                "gold_units is empty",
            ),
        ] {
            let e =
                Dataset::from_parts(mat(2, 2), mat(1, 2), spec(line), Some(m.clone())).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        }
    }

    #[test]
    fn from_parts_checks_the_matrix_size() {
        let q = spec(ONE_QUERY);
        let mut m = mat(3, 2);
        m.data.pop();
        let e = Dataset::from_parts(m, mat(1, 2), q, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "memories.f32.npy: holds 5 values, but 3 rows × 2 columns need 6"
        );
    }
}
