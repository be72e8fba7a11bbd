//! Loader of the HotpotQA distractor evidence-selection fixture
//! (`shared/data/hotpotqa-distractor/`, see its README): query and memory
//! embeddings (all-MiniLM-L6-v2, 384-d, unit rows, `.npy` f32) and, per
//! query, its candidate pool and gold memory ids (`queries.jsonl`).

use std::path::{Path, PathBuf};

use mempursuit::npy::{read_f32, Matrix};

/// One query of the fixture.
#[derive(Debug, Clone, PartialEq)]
pub struct FixtureQuery {
    /// HotpotQA id.
    pub id: String,
    /// Memory ids of the pool, in HotpotQA context order.
    pub pool: Vec<usize>,
    /// Memory ids of the supporting facts.
    pub gold: Vec<usize>,
}

/// The loaded fixture.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// The directory it was loaded from.
    pub dir: PathBuf,
    /// Memory embeddings, one row per memory id (N × d).
    pub memories: Matrix,
    /// Query embeddings, row i = `queries[i]` (Q × d).
    pub query_embeddings: Matrix,
    /// Queries in file order.
    pub queries: Vec<FixtureQuery>,
}

impl Fixture {
    /// Loads `queries.jsonl`, `queries.f32.npy` and `memories.f32.npy` from
    /// `dir`.
    ///
    /// # Errors
    /// A message naming the file that is missing or malformed, or the first
    /// inconsistency (row counts, dimensions, pool ids out of range).
    pub fn load(dir: &Path) -> Result<Fixture, String> {
        let memories = read_f32(dir.join("memories.f32.npy")).map_err(|e| e.to_string())?;
        let query_embeddings = read_f32(dir.join("queries.f32.npy")).map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(dir.join("queries.jsonl"))
            .map_err(|e| format!("{}: {e}", dir.join("queries.jsonl").display()))?;
        let ids = |v: &serde_json::Value, key: &str| -> Result<Vec<usize>, String> {
            v[key]
                .as_array()
                .ok_or(format!("queries.jsonl: missing `{key}`"))?
                .iter()
                .map(|x| {
                    x.as_u64()
                        .map(|x| x as usize)
                        .ok_or(format!("queries.jsonl: bad id in `{key}`"))
                })
                .collect()
        };
        let mut queries = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value =
                serde_json::from_str(line).map_err(|e| format!("queries.jsonl: {e}"))?;
            let q = FixtureQuery {
                id: v["id"].as_str().unwrap_or_default().to_string(),
                pool: ids(&v, "pool")?,
                gold: ids(&v, "gold")?,
            };
            if let Some(&bad) = q.pool.iter().find(|&&i| i >= memories.rows) {
                return Err(format!("query {}: pool id {bad} out of range", q.id));
            }
            queries.push(q);
        }
        if queries.len() != query_embeddings.rows || memories.cols != query_embeddings.cols {
            return Err(format!(
                "{}: {} queries but {} query rows, dims {} vs {}",
                dir.display(),
                queries.len(),
                query_embeddings.rows,
                memories.cols,
                query_embeddings.cols
            ));
        }
        Ok(Fixture {
            dir: dir.to_path_buf(),
            memories,
            query_embeddings,
            queries,
        })
    }

    /// Embedding dimension d.
    pub fn dim(&self) -> usize {
        self.memories.cols
    }

    /// The embedding of query `q` (d values).
    pub fn query(&self, q: usize) -> &[f32] {
        self.query_embeddings.row(q)
    }

    /// The pool of query `q` as a row-major P × d matrix (rows in pool order).
    pub fn pool(&self, q: usize) -> Vec<f32> {
        self.queries[q]
            .pool
            .iter()
            .flat_map(|&m| self.memories.row(m).iter().copied())
            .collect()
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn is_fixture_dir(d: &Path) -> bool {
    ["queries.jsonl", "queries.f32.npy", "memories.f32.npy"]
        .iter()
        .all(|f| d.join(f).is_file())
}

/// Where the 24-query `mini` fixture is looked for, in order:
/// `cli/data/hotpotqa-mini/` in the repository, then
/// `../shared/data/hotpotqa-distractor/mini/` relative to the repository,
/// then `/work/shared/data/hotpotqa-distractor/mini/`.
pub fn mini_candidates() -> Vec<PathBuf> {
    let root = repo_root();
    vec![
        root.join("cli/data/hotpotqa-mini"),
        root.join("../shared/data/hotpotqa-distractor/mini"),
        PathBuf::from("/work/shared/data/hotpotqa-distractor/mini"),
    ]
}

/// Where the full 340-query fixture is looked for, in order: the directory
/// in the environment variable `MEMPURSUIT_HOTPOTQA_DIR`, then
/// `../shared/data/hotpotqa-distractor/` relative to the repository, then
/// `/work/shared/data/hotpotqa-distractor/`.
pub fn full_candidates() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::env::var_os("MEMPURSUIT_HOTPOTQA_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    let root = repo_root();
    v.push(root.join("../shared/data/hotpotqa-distractor"));
    v.push(PathBuf::from("/work/shared/data/hotpotqa-distractor"));
    v
}

/// The first directory of `candidates` that holds the fixture files.
pub fn find(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates.iter().find(|d| is_fixture_dir(d)).cloned()
}
