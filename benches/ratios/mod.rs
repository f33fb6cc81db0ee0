//! The ratio report of the macro benches: each ratio of two benches
//! measured once more with the two sides interleaved ([`paired`]), next to
//! criterion's quotient of the two medians read from its output
//! ([`estimate_ns`]), and the table printed after criterion
//! ([`print_report`]).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Rounds of the interleaved ratio measurement.
const ROUNDS: usize = 21;
/// Target length of one timed block of calls in a round.
const BLOCK: Duration = Duration::from_millis(20);

/// A ratio `num / den` within a group, its target (`None`: diagnostic) and
/// both measurements of it.
pub struct Row {
    group: &'static str,
    num: &'static str,
    den: &'static str,
    target: Option<f64>,
    paired: Paired,
}

/// Median and 10th/90th percentiles of the per-round ratios.
pub struct Paired {
    median: f64,
    p10: f64,
    p90: f64,
}

/// What the groups report, and when this run started.
pub struct Report {
    pub since: SystemTime,
    pub rows: Vec<Row>,
}

impl Report {
    /// Whether criterion measured `group/bench` in this run (not filtered
    /// out, not `--test`/`--list` mode).
    fn ran(&self, group: &str, bench: &str) -> bool {
        estimate_ns(group, bench, self.since).is_some()
    }

    /// Adds the ratio `num / den` measured by [`paired`], if criterion ran
    /// both benches in this run.
    pub fn ratio(
        &mut self,
        (group, num, den, target): (&'static str, &'static str, &'static str, Option<f64>),
        a: impl FnMut(),
        b: impl FnMut(),
    ) {
        if self.ran(group, num) && self.ran(group, den) {
            let paired = paired(a, b);
            self.rows.push(Row {
                group,
                num,
                den,
                target,
                paired,
            });
        }
    }
}

/// Times `a` against `b` interleaved: `ROUNDS` rounds, each timing a block
/// of calls of `a` and a block of calls of `b` (about `BLOCK` each, the
/// order alternating between rounds), and takes the ratio of the per-call
/// times within each round. Load from other processes on a shared machine
/// then hits both sides of a round alike, which sequential criterion groups
/// cannot guarantee.
fn paired(mut a: impl FnMut(), mut b: impl FnMut()) -> Paired {
    fn calls(f: &mut impl FnMut()) -> u32 {
        let t = std::time::Instant::now();
        f();
        let once = t.elapsed().max(Duration::from_nanos(1));
        (BLOCK.as_nanos() / once.as_nanos()).clamp(1, 10_000_000) as u32
    }
    fn block(f: &mut impl FnMut(), n: u32) -> f64 {
        let t = std::time::Instant::now();
        for _ in 0..n {
            f();
        }
        t.elapsed().as_secs_f64() / n as f64
    }
    let (na, nb) = (calls(&mut a), calls(&mut b));
    let mut ratios: Vec<f64> = (0..ROUNDS)
        .map(|r| {
            if r % 2 == 0 {
                let ta = block(&mut a, na);
                ta / block(&mut b, nb)
            } else {
                let tb = block(&mut b, nb);
                block(&mut a, na) / tb
            }
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let q = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
    Paired {
        median: q(0.5),
        p10: q(0.1),
        p90: q(0.9),
    }
}

/// Criterion's output directory (as criterion chooses it under cargo).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("criterion")
}

/// The median point estimate (ns) of `group/bench`, if criterion wrote it in
/// this run (estimates from earlier runs are ignored).
fn estimate_ns(group: &str, bench: &str, since: SystemTime) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
        .join(bench)
        .join("new/estimates.json");
    let meta = std::fs::metadata(&path).ok()?;
    if meta.modified().ok()? < since {
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

pub fn print_report(report: &Report) {
    if report.rows.is_empty() {
        return;
    }
    println!(
        "\nratios: criterion = quotient of the two median estimates; \
         paired = median [p10-p90] of {ROUNDS} interleaved rounds (the figure to quote)"
    );
    for row in &report.rows {
        let est = |b| estimate_ns(row.group, b, report.since).unwrap_or(f64::NAN);
        let p = &row.paired;
        let verdict = match row.target {
            Some(t) if p.median <= t => format!("target <= {t}x: met"),
            Some(t) => format!("target <= {t}x: NOT met"),
            None => "diagnostic".to_string(),
        };
        println!(
            "  {:<14} {:>26} / {:<18} criterion {:>5.2}x  paired {:>5.2}x [{:.2}-{:.2}]  {verdict}",
            row.group,
            row.num,
            row.den,
            est(row.num) / est(row.den),
            p.median,
            p.p10,
            p.p90,
        );
    }
}
