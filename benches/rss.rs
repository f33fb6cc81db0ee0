//! Resident memory over a long run: the process's RSS while the imperative
//! and functional training loops of an MLP and of the GPT example's model
//! run 10⁵ steps each, beside PyTorch eager running the same imperative
//! loops (`benches/compare/torch_rss_twin.py`, in the same run when a
//! Python with torch is found). Prints RSS in MiB at steps 10³, 10⁴ and
//! 10⁵ and the growth from 10³ to 10⁵; a flat loop grows by ~0.
//!
//! Run: `cargo bench --bench rss` (environment: `RSS_STEPS`, default
//! 100000; `RSS_TWIN_STEPS`, the twin's steps, default the same;
//! `RSS_PYTHON`, the twin's interpreter, default
//! `benches/compare/.venv/bin/python`, then `target/bench-venv/bin/python`).
//! Never run in CI.

use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{AdamW, Optimizer, Sgd};
use nabla::prelude::*;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Resident set size of this process, in MiB (Linux's /proc/self/statm).
fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(f64::NAN);
    pages * 4096.0 / (1 << 20) as f64
}

/// The steps at which RSS is sampled: 10³, 10⁴, ... up to `n`.
fn marks(n: usize) -> Vec<usize> {
    let mut m: Vec<usize> = (3..)
        .map(|e| 10usize.pow(e))
        .take_while(|&s| s < n)
        .collect();
    m.push(n);
    m
}

/// Runs `step` `n` times; RSS at each mark.
fn run(n: usize, mut step: impl FnMut(usize)) -> (Vec<f64>, f64) {
    let marks = marks(n);
    let mut rss = Vec::new();
    let clock = Instant::now();
    for i in 0..n {
        step(i);
        if marks.contains(&(i + 1)) {
            rss.push(rss_mib());
        }
    }
    (rss, clock.elapsed().as_secs_f64())
}

// The parameters are a `Vec` tree, as a training loop holds them.
#[allow(clippy::ptr_arg)]
#[differentiable]
fn mlp_loss(p: &Vec<Array>, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p[0]) + &p[1]).tanh();
    nabla::mse_loss(&(h.matmul(&p[2]) + &p[3]), y)
}

#[differentiable]
fn gpt_loss(gpt: &Gpt, #[nondiff] x: &Array, #[nondiff] y: &Array) -> Array {
    gpt.loss(x, y)
}

/// The MLP of `torch_rss_twin.py`: 16 → 64 → 1, a batch of 64.
fn mlp() -> (Vec<Array>, Array, Array) {
    let k = Key::new(0).split(3);
    let x = k[0].normal(&[64, 16], DType::F32);
    let y = x.sum_axes(&[1], true).sin();
    let p = vec![
        k[1].normal(&[16, 64], DType::F32) * 0.25,
        Array::zeros(&[64], DType::F32),
        k[2].normal(&[64, 1], DType::F32) * 0.125,
        Array::zeros(&[1], DType::F32),
    ];
    (p, x, y)
}

/// The GPT of `torch_rss_twin.py`: vocab 65, context 32, 2 layers of 4
/// heads, width 48, a batch of 4 (the example's model at a shorter context).
fn gpt() -> (Gpt, Vec<(Array, Array)>) {
    let cfg = GptConfig {
        vocab: 65,
        context: 32,
        layers: 2,
        heads: 4,
        embd: 48,
    };
    let gpt = Gpt::new(&cfg, Key::new(0));
    let batches = (0..8u64)
        .map(|b| {
            let ids = |k: u64| {
                let u = Key::new(100 + 2 * b + k).uniform(&[4, 32], DType::F64) * 65.0;
                u.floor().cast(DType::I64)
            };
            (ids(0), ids(1))
        })
        .collect();
    (gpt, batches)
}

fn main() {
    let n: usize = std::env::var("RSS_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let mut rows: Vec<(&str, Vec<f64>, f64)> = Vec::new();

    let (p0, x, y) = mlp();
    let mut p: Vec<Array> = p0.iter().map(|a| a.clone().requires_grad()).collect();
    let opt = Sgd::new(0.01).momentum(0.9);
    let mut state = opt.init(&p);
    let (rss, s) = run(n, |_| {
        let h = (x.matmul(&p[0]) + &p[1]).tanh();
        let loss = nabla::mse_loss(&(h.matmul(&p[2]) + &p[3]), &y);
        loss.backward();
        opt.step(&mut p, &mut state);
        p.iter().for_each(|a| a.zero_grad());
    });
    rows.push(("mlp_tape", rss, s));

    let mut p = p0.clone();
    let mut state = opt.init(&p);
    let (rss, s) = run(n, |_| {
        let g = nabla::grad(mlp_loss)(&p, &x, &y);
        opt.update(&mut p, &g, &mut state);
    });
    rows.push(("mlp_fn", rss, s));

    let (g0, batches) = gpt();
    let adam = AdamW::new(1e-3);
    let mut m = g0.clone();
    m.for_each_leaf_mut(&mut |a| *a = a.detach().requires_grad());
    let mut state = adam.init(&m);
    let (rss, s) = run(n, |i| {
        let (bx, by) = &batches[i % batches.len()];
        let loss = m.loss(bx, by);
        loss.backward();
        adam.step(&mut m, &mut state);
        m.for_each_leaf(&mut |a| a.zero_grad());
    });
    rows.push(("gpt_tape", rss, s));

    let mut m = g0.clone();
    let mut state = adam.init(&m);
    let (rss, s) = run(n, |i| {
        let (bx, by) = &batches[i % batches.len()];
        let g = nabla::grad(gpt_loss)(&m, bx, by);
        adam.update(&mut m, &g, &mut state);
    });
    rows.push(("gpt_fn", rss, s));

    let twin = twin(n);
    let marks = marks(n);
    let head: Vec<String> = marks.iter().map(|m| format!("@{m}")).collect();
    println!("RSS in MiB ({n} steps per loop; nabla loops run one after another in one process)");
    println!(
        "{:<22}{}{:>10}{:>10}",
        "loop",
        head.iter().map(|h| format!("{h:>10}")).collect::<String>(),
        "growth",
        "seconds"
    );
    let line = |name: String, rss: &[f64], s: f64| {
        let cells: String = rss.iter().map(|r| format!("{r:>10.1}")).collect();
        let growth = rss.last().unwrap_or(&f64::NAN) - rss.first().unwrap_or(&f64::NAN);
        println!("{name:<22}{cells}{growth:>+10.2}{s:>10.1}");
    };
    for (name, rss, s) in &rows {
        line(format!("nabla {name}"), rss, *s);
    }
    match twin {
        Some(t) => {
            for (name, rss, s) in t {
                line(format!("torch {name}"), &rss, s);
            }
        }
        None => println!("(no PyTorch twin: set RSS_PYTHON to a Python with torch)"),
    }
}

/// The PyTorch twin's rows, if a Python with torch is found.
fn twin(n: usize) -> Option<Vec<(String, Vec<f64>, f64)>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var("RSS_PYTHON").ok().or_else(|| {
        [
            "benches/compare/.venv/bin/python",
            "target/bench-venv/bin/python",
        ]
        .iter()
        .map(|p| root.join(p))
        .find(|p| p.exists())
        .map(|p| p.display().to_string())
    })?;
    let out = Command::new(python)
        .arg(root.join("benches/compare/torch_rss_twin.py"))
        .arg(std::env::var("RSS_TWIN_STEPS").unwrap_or_else(|_| n.to_string()))
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "torch twin failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let rows = json.as_object()?;
    Some(
        rows.iter()
            .map(|(name, r)| {
                let rss = r["rss"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|v| v.as_f64()).collect())
                    .unwrap_or_default();
                (name.clone(), rss, r["seconds"].as_f64().unwrap_or(f64::NAN))
            })
            .collect(),
    )
}
