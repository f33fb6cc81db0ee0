//! ALPA's inter-operator pass, modelled: a model's repeated layers cut
//! into contiguous pipeline stages of balanced cost ([`split_stages`]),
//! and the 1F1B schedule of micro-batches over them
//! ([`pipeline_schedule`]), simulated op by op, which gives the step's
//! time and the bubble (the fraction of stage time spent idle).

use std::ops::Range;

/// The simulated 1F1B schedule of one step.
///
/// ```
/// let s = nabla::dist::pipeline_schedule(&[1.0, 1.0], &[2.0, 2.0], 4);
/// assert_eq!((s.time_s, s.bubble), (15.0, 1.0 / 5.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// Seconds from the first forward to the last backward.
    pub time_s: f64,
    /// The fraction of the stages' time spent idle:
    /// `(stages · time − Σ busy) / (stages · time)`.
    pub bubble: f64,
    /// Each stage's `(start, end, micro-batch, is_backward)`, in the
    /// order it runs them.
    pub ops: Vec<Vec<(f64, f64, usize, bool)>>,
}

/// A pipeline for repeated layers: the stages, each stage's time per
/// micro-batch, and the schedule.
///
/// ```
/// use nabla::dist::PipelinePlan;
/// // Eight equal layers (forward 1, backward 2 per micro-batch) on four stages.
/// let p = PipelinePlan::new(&[1.0; 8], &[2.0; 8], 4, 12);
/// assert_eq!(p.stages, vec![0..2, 2..4, 4..6, 6..8]);
/// assert_eq!(p.schedule.bubble, 3.0 / 15.0); // (p − 1) / (m + p − 1)
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PipelinePlan {
    /// Each stage's layers.
    pub stages: Vec<Range<usize>>,
    /// Each stage's forward seconds per micro-batch.
    pub stage_fwd_s: Vec<f64>,
    /// Each stage's backward seconds per micro-batch.
    pub stage_bwd_s: Vec<f64>,
    /// Micro-batches per step.
    pub micro_batches: usize,
    /// The 1F1B schedule.
    pub schedule: Schedule,
}

impl PipelinePlan {
    /// Cuts layers of forward and backward seconds `fwd[l]`, `bwd[l]`
    /// (per micro-batch) into `stages` contiguous stages minimising the
    /// slowest stage, and schedules `micro_batches` micro-batches with
    /// 1F1B. Panics if the lists differ in length or there are fewer
    /// layers than stages.
    ///
    /// ```
    /// let p = nabla::dist::PipelinePlan::new(&[3.0, 1.0, 1.0, 1.0], &[3.0, 1.0, 1.0, 1.0], 2, 4);
    /// assert_eq!(p.stages, vec![0..1, 1..4]);
    /// ```
    #[track_caller]
    pub fn new(fwd: &[f64], bwd: &[f64], stages: usize, micro_batches: usize) -> PipelinePlan {
        if fwd.len() != bwd.len() {
            panic!(
                "nabla::dist::PipelinePlan::new: {} forward times but {} backward times; give one of each per layer",
                fwd.len(),
                bwd.len()
            );
        }
        let cost: Vec<f64> = fwd.iter().zip(bwd).map(|(f, b)| f + b).collect();
        let ranges = split_stages(&cost, stages);
        let sum = |x: &[f64], r: &Range<usize>| x[r.clone()].iter().sum::<f64>();
        let stage_fwd_s: Vec<f64> = ranges.iter().map(|r| sum(fwd, r)).collect();
        let stage_bwd_s: Vec<f64> = ranges.iter().map(|r| sum(bwd, r)).collect();
        let schedule = pipeline_schedule(&stage_fwd_s, &stage_bwd_s, micro_batches);
        PipelinePlan {
            stages: ranges,
            stage_fwd_s,
            stage_bwd_s,
            micro_batches,
            schedule,
        }
    }
}

/// Cuts `costs` (one per layer) into `stages` contiguous, non-empty runs
/// minimising the largest run's sum (a dynamic programme over cut
/// points). Panics when there are fewer layers than stages or no stages.
///
/// ```
/// let s = nabla::dist::split_stages(&[1.0, 2.0, 3.0, 4.0], 2);
/// assert_eq!(s, vec![0..3, 3..4]);
/// ```
#[track_caller]
pub fn split_stages(costs: &[f64], stages: usize) -> Vec<Range<usize>> {
    let n = costs.len();
    if stages == 0 || stages > n {
        panic!(
            "nabla::dist::split_stages: {n} layers cannot fill {stages} stages; use between 1 and {n} stages"
        );
    }
    let mut prefix = vec![0.0; n + 1];
    for i in 0..n {
        prefix[i + 1] = prefix[i] + costs[i];
    }
    // best[j][i]: the least largest run cutting the first i layers into j runs.
    let mut best = vec![vec![f64::INFINITY; n + 1]; stages + 1];
    let mut cut = vec![vec![0; n + 1]; stages + 1];
    best[0][0] = 0.0;
    for j in 1..=stages {
        for i in j..=n {
            for c in (j - 1)..i {
                let v = best[j - 1][c].max(prefix[i] - prefix[c]);
                if v < best[j][i] {
                    best[j][i] = v;
                    cut[j][i] = c;
                }
            }
        }
    }
    let mut out = Vec::with_capacity(stages);
    let mut i = n;
    for j in (1..=stages).rev() {
        let c = cut[j][i];
        out.push(c..i);
        i = c;
    }
    out.reverse();
    out
}

/// Stage `s`'s order of `(micro-batch, is_backward)` under 1F1B with `p`
/// stages and `m` micro-batches: `p − 1 − s` forwards to fill the pipe,
/// then one forward and one backward in turn, then the backwards left.
/// The simulator and the runtime ([`Pipeline`](crate::dist)) both follow it.
pub(crate) fn one_f_one_b(p: usize, s: usize, m: usize) -> Vec<(usize, bool)> {
    let warm = (p - 1 - s).min(m);
    let mut o: Vec<(usize, bool)> = (0..warm).map(|i| (i, false)).collect();
    for i in 0..m - warm {
        o.push((warm + i, false));
        o.push((i, true));
    }
    o.extend((m - warm..m).map(|i| (i, true)));
    o
}

/// Simulates the 1F1B schedule of `micro_batches` micro-batches over
/// stages taking `fwd[s]` and `bwd[s]` seconds per micro-batch: stage
/// `s` runs `p − 1 − s` forwards, then alternates one forward and one
/// backward, then runs the remaining backwards; a forward waits for the
/// previous stage's forward of its micro-batch, a backward for the next
/// stage's backward. With equal stages the bubble is
/// `(p − 1) / (m + p − 1)`. Transfers between stages are not modelled.
///
/// ```
/// let s = nabla::dist::pipeline_schedule(&[1.0; 4], &[1.0; 4], 8);
/// assert_eq!(s.bubble, 3.0 / 11.0);
/// ```
#[track_caller]
pub fn pipeline_schedule(fwd: &[f64], bwd: &[f64], micro_batches: usize) -> Schedule {
    let (p, m) = (fwd.len(), micro_batches);
    if p == 0 || p != bwd.len() {
        panic!(
            "nabla::dist::pipeline_schedule: {} forward and {} backward stage times; give one of each per stage, at least one stage",
            fwd.len(),
            bwd.len()
        );
    }
    let order: Vec<Vec<(usize, bool)>> = (0..p).map(|s| one_f_one_b(p, s, m)).collect();
    let mut done_f = vec![vec![f64::NAN; m]; p];
    let mut done_b = vec![vec![f64::NAN; m]; p];
    let mut next = vec![0; p];
    let mut free = vec![0.0f64; p];
    let mut ops = vec![Vec::with_capacity(2 * m); p];
    let total = 2 * m * p;
    let mut scheduled = 0;
    while scheduled < total {
        let before = scheduled;
        for s in 0..p {
            while let Some(&(i, back)) = order[s].get(next[s]) {
                let dep = match (back, s) {
                    (false, 0) => 0.0,
                    (false, _) => done_f[s - 1][i],
                    (true, _) if s + 1 == p => done_f[s][i],
                    (true, _) => done_b[s + 1][i],
                };
                if dep.is_nan() {
                    break;
                }
                let start = free[s].max(dep);
                let end = start + if back { bwd[s] } else { fwd[s] };
                if back {
                    done_b[s][i] = end;
                } else {
                    done_f[s][i] = end;
                }
                free[s] = end;
                ops[s].push((start, end, i, back));
                next[s] += 1;
                scheduled += 1;
            }
        }
        assert!(scheduled > before, "the 1F1B order has no deadlock");
    }
    let time_s = free.iter().copied().fold(0.0, f64::max);
    let busy: f64 = (0..p).map(|s| m as f64 * (fwd[s] + bwd[s])).sum();
    let span = p as f64 * time_s;
    let bubble = if span > 0.0 {
        (span - busy) / span
    } else {
        0.0
    };
    Schedule {
        time_s,
        bubble,
        ops,
    }
}
