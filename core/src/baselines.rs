//! The baselines a user compares against (the paper compares with both):
//! top-K and MMR, with the same input contract, workspace and result type as the pursuit.

use crate::error::Error;
use crate::input::{first_stop, prepare, Input, Spend};
use crate::kernels::{Element, Executor, Serial};
use crate::options::{InputPolicy, MmrOptions};
use crate::pursuit::scorer::{argmax_available, gram_row_into, Passes};
use crate::scratch::ScratchKind;
use crate::selection::{CandidateState, SelectionView, States, Step};
use crate::workspace::Workspace;

/// Top-K: the pool in relevance order (ρ = b, the cosine to the query, unless
/// the input gives another [`Relevance`](crate::Relevance)), highest first;
/// ties in ρ go to the candidate closer to the query (higher b), then to the
/// lowest index, so that equal relevance still follows the query. Each
/// [`Step::score`] is ρ of the pick; the selection has no weights.
///
/// # Errors
/// The input errors of [`Error`], as for [`pursuit`](crate::pursuit).
pub fn top_k<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    policy: &InputPolicy,
    ws: &'w mut Workspace<'_>,
) -> Result<SelectionView<'w>, Error> {
    top_k_with(input, budget, policy, ws, &mut Serial)
}

/// [`top_k`] with the query pass run by `executor` (its parts and its
/// instruction set, [`Executor::isa`]).
///
/// # Errors
/// As [`top_k`].
pub fn top_k_with<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    policy: &InputPolicy,
    ws: &'w mut Workspace<'_>,
    executor: &mut dyn Executor,
) -> Result<SelectionView<'w>, Error> {
    let prep = prepare(input, budget, policy, ws, executor)?;
    let p = prep.pool;
    let k_eff = budget.min(p);
    ws.stop = first_stop(budget, p);
    let spend = &mut Spend::new(input.cost_budget);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = best_by_relevance(&ws.rho[..p], &ws.b[..p], &ws.states) else {
            ws.stop = spend.stop_reason(ws);
            break;
        };
        let score = ws.rho[i];
        record(ws, t, i, score);
        spend.after_pick(ws, i);
        t += 1;
    }
    ws.rows_read = 0;
    let ws: &'w Workspace<'_> = ws;
    Ok(ws.selection(t, false))
}

/// Top-K's next pick: the available candidate with the highest ρ, ties to
/// the higher query cosine b, then to the lowest index.
fn best_by_relevance(rho: &[f32], b: &[f32], states: &States<'_>) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, (&r, &c)) in rho.iter().zip(b).enumerate() {
        if !states.is_available(i) {
            continue;
        }
        let better = match best {
            None => true,
            Some(j) => r > rho[j] || (r == rho[j] && c > b[j]),
        };
        if better {
            best = Some(i);
        }
    }
    best
}

/// Maximal marginal relevance (Carbonell & Goldstein 1998): each pick is
/// argmax λ_mmr ρ_i − (1 − λ_mmr) max_{s∈S} G_is over the unselected
/// candidates (the penalty is against *all* picks; it is 0 for the first
/// pick), ties to the lowest index. λ_mmr = 1 is exactly top-K; smaller
/// values diversify more (the paper uses 0.5). Each [`Step::score`] is the
/// MMR score at pick time; the selection has no weights.
///
/// # Errors
/// [`Error::InvalidMmrLambda`] unless 0 ≤ λ_mmr ≤ 1, and the input errors of
/// [`Error`].
pub fn mmr<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    options: &MmrOptions,
    ws: &'w mut Workspace<'_>,
) -> Result<SelectionView<'w>, Error> {
    mmr_with(input, budget, options, ws, &mut Serial)
}

/// [`mmr`] with the query pass and the Gram rows run by `executor` (its
/// parts and its instruction set, [`Executor::isa`]).
///
/// # Errors
/// As [`mmr`].
pub fn mmr_with<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    options: &MmrOptions,
    ws: &'w mut Workspace<'_>,
    executor: &mut dyn Executor,
) -> Result<SelectionView<'w>, Error> {
    options.validate()?;
    ws.require(ScratchKind::Centroid)?;
    let lambda = options.lambda;
    let prep = prepare(input, budget, &options.input, ws, executor)?;
    let (p, d) = (prep.pool, prep.dim);
    let mut pass = Passes::new(input.matrix(), d, executor);
    let k_eff = budget.min(p);
    ws.stop = first_stop(budget, p);
    let (lam, pen) = (lambda as f32, (1.0 - lambda) as f32);
    // u = MMR scores; gram_max = max similarity to the picks so far.
    for i in 0..p {
        ws.u[i] = lam * ws.rho[i];
    }
    let spend = &mut Spend::new(input.cost_budget);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = argmax_available(&ws.u[..p], &ws.states) else {
            ws.stop = spend.stop_reason(ws);
            break;
        };
        let score = ws.u[i];
        record(ws, t, i, score);
        spend.after_pick(ws, i);
        t += 1;
        if pen > 0.0 && t < k_eff {
            gram_row_into(&mut pass, i, 0, ws);
            let row = &ws.gram[..p];
            for j in 0..p {
                let m = if t == 1 {
                    row[j]
                } else {
                    ws.gram_max[j].max(row[j])
                };
                ws.gram_max[j] = m;
                ws.u[j] = lam * ws.rho[j] - pen * m;
            }
        }
    }
    ws.rows_read = 0;
    let ws: &'w Workspace<'_> = ws;
    Ok(ws.selection(t, false))
}

/// Marks candidate `i` selected as pick `t` with its baseline score.
fn record(ws: &mut Workspace<'_>, t: usize, i: usize, score: f32) {
    ws.states.set(i, CandidateState::Selected);
    ws.picks[t] = i;
    ws.steps[t] = Step {
        index: i,
        score: score as f64,
        ..Step::default()
    };
}
