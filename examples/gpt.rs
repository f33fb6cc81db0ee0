//! A character-level GPT (`nabla::nn::models::Gpt`) trained on the
//! repository's own documentation (`README.md` and `docs/design.md`,
//! compiled in with `include_str!`: nothing is downloaded), with the tape
//! (`requires_grad`, `backward`), AdamW under a warm-up + cosine schedule
//! and gradient clipping. It shows a progress bar (step, loss, tokens/s),
//! saves a checkpoint (model *and* optimizer state, both trees saved with
//! `nabla::io::save`) every N steps, can resume from the latest one with
//! the same losses as an uninterrupted run, draws the loss curve to
//! `gpt_loss.png` and samples text from the checkpoint it reloads.
//!
//! Run: `cargo run --release --example gpt` (under a minute on two idle
//! cores, a few minutes on busy ones), or with flags after `--`:
//!
//! - `--steps N`: train N steps in all (default 2000; the learning-rate
//!   schedule spans them, so a resumed run must be given the same N);
//! - `--checkpoint-every N`: save a checkpoint every N steps (default 500;
//!   0: only at the end); the last checkpoint is always written;
//! - `--checkpoint-dir DIR`: where (default `target/gpt-checkpoint`), one
//!   folder `step-NNNNNN` per checkpoint, the latest three kept;
//! - `--resume`: continue from the latest checkpoint in that folder;
//! - `--stop-after N`: stop (with a checkpoint) after step N, as if the run
//!   were interrupted there, to try `--resume`.
//!
//! The batches are windows of the text at offsets that are a hash of the
//! step number (no running random state), so a resumed run sees the same
//! data as an uninterrupted one and, with the restored model, optimizer
//! moments and step counts, computes bit for bit the same losses:
//!
//! ```text
//! gpt --steps 600 --stop-after 300   # "interrupted" after step 300
//! gpt --steps 600 --resume           # steps 301 to 600
//! ```
//!
//! end on the checkpoint of `gpt --steps 600`, byte for byte (CI checks).
//!
//! When standard output is not a terminal (CI, a log file), the bar is
//! hidden and a plain line is printed every tenth of the run instead.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{AdamW, Optimizer, Schedule, State, clip_leaf_grad_norm};
use nabla::prelude::*;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod plot;

type Error = Box<dyn std::error::Error>;

/// The training text: the repository's own prose, compiled in.
const CORPUS: [&str; 2] = [
    include_str!("../README.md"),
    include_str!("../docs/design.md"),
];

/// Windows per batch.
const BATCH: usize = 16;
/// The peak learning rate.
const LR: f64 = 3e-3;
/// Clip the gradient's global norm to this.
const CLIP: f64 = 1.0;
/// Mixed into the batch offsets' hash.
const DATA_SEED: u64 = 0x9e37_79b9_7f4a_7c15;
/// The share of the text held out for the validation loss.
const HELD_OUT: f64 = 0.1;
/// Checkpoint folders kept.
const KEEP: usize = 3;

struct Args {
    steps: u64,
    resume: bool,
    checkpoint_every: u64,
    checkpoint_dir: PathBuf,
    stop_after: Option<u64>,
}

const USAGE: &str = "usage: gpt [--steps N] [--checkpoint-every N] [--checkpoint-dir DIR] [--resume] \
                     [--stop-after N]";

/// The flags, parsed by hand from `std::env::args`.
fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        steps: 2000,
        resume: false,
        checkpoint_every: 500,
        checkpoint_dir: PathBuf::from("target/gpt-checkpoint"),
        stop_after: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        let number = |name: &str, v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{name} takes a whole number, found {v:?}\n{USAGE}"))
        };
        match flag.as_str() {
            "--steps" => args.steps = number("--steps", value("--steps")?)?,
            "--checkpoint-every" => {
                args.checkpoint_every = number("--checkpoint-every", value("--checkpoint-every")?)?
            }
            "--checkpoint-dir" => args.checkpoint_dir = value("--checkpoint-dir")?.into(),
            "--stop-after" => {
                args.stop_after = Some(number("--stop-after", value("--stop-after")?)?)
            }
            "--resume" => args.resume = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    if args.steps == 0 || args.stop_after == Some(0) {
        return Err(format!("--steps and --stop-after take at least 1\n{USAGE}"));
    }
    Ok(args)
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Error> {
    // Characters to ids.
    let text: String = CORPUS.concat();
    let mut vocab: Vec<char> = text.chars().collect();
    vocab.sort_unstable();
    vocab.dedup();
    let encode = |c: char| vocab.binary_search(&c).expect("a character of the text") as i64;
    let data: Vec<i64> = text.chars().map(encode).collect();
    let split = ((1.0 - HELD_OUT) * data.len() as f64) as usize;
    let (train, held_out) = data.split_at(split);

    let cfg = GptConfig {
        vocab: vocab.len(),
        context: 64,
        layers: 2,
        heads: 4,
        embd: 48,
    };
    let t = cfg.context;
    let mut gpt = Gpt::new(&cfg, Key::new(0));
    let params: usize = nabla::tree::leaves(&gpt).iter().map(|p| p.numel()).sum();
    println!(
        "{} characters of README.md and docs/design.md ({} held out), vocabulary {}, {params} parameters",
        data.len(),
        held_out.len(),
        vocab.len()
    );

    let steps = args.steps;
    let stop = args.stop_after.map_or(steps, |s| s.min(steps));
    let warmup = (steps / 10).min(100);
    let opt = AdamW::new(0.0)
        .betas(0.9, 0.95)
        .schedule(Schedule::warmup_cosine(0.0, LR, warmup, steps, LR / 10.0));
    let mut state = opt.init(&gpt);
    // What a checkpoint must agree on to be resumed: the model's shape, the
    // run's length (the schedule spans it), the batch and the text.
    let meta = [
        cfg.vocab,
        cfg.context,
        cfg.layers,
        cfg.heads,
        cfg.embd,
        BATCH,
        data.len(),
    ]
    .map(|v| v as u64)
    .into_iter()
    .chain([steps, fingerprint(&data)])
    .collect::<Vec<u64>>();

    // Start fresh, or from the latest checkpoint.
    let dir = &args.checkpoint_dir;
    let mut losses: Vec<f64> = Vec::new();
    let start = if args.resume {
        let Some((at, path)) = latest_checkpoint(dir)? else {
            return Err(format!(
                "--resume: no checkpoint in {}; run without --resume first",
                dir.display()
            )
            .into());
        };
        losses = load_checkpoint(&path, &meta, &mut gpt, &mut state)?;
        println!("resumed from {} (step {at} of {steps})", path.display());
        at
    } else {
        let old = checkpoints(dir)?;
        for (_, path) in &old {
            std::fs::remove_dir_all(path)?;
        }
        if !old.is_empty() {
            println!(
                "starting afresh: removed {} old checkpoint(s) in {}",
                old.len(),
                dir.display()
            );
        }
        0
    };
    gpt.for_each_leaf_mut(&mut |p| *p = p.detach().requires_grad());

    let tokens_per_step = (BATCH * t) as f64;
    let terminal = std::io::stdout().is_terminal();
    let bar = if terminal {
        ProgressBar::with_draw_target(Some(steps), ProgressDrawTarget::stdout())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:32.cyan/blue} step {pos}/{len}  {msg}  [{elapsed} < {eta}]",
        )?
        .progress_chars("=> "),
    );
    bar.set_position(start);
    let report_every = (steps / 10).max(1);
    let say = |line: String| {
        if terminal {
            bar.println(line)
        } else {
            println!("{line}")
        }
    };

    let clock = Instant::now();
    for step in start..stop {
        let (x, y) = batch(train, step, t);
        let loss = gpt.loss(&x, &y);
        loss.backward();
        clip_leaf_grad_norm(&gpt, CLIP);
        opt.step(&mut gpt, &mut state);
        gpt.for_each_leaf(&mut |p| p.zero_grad());
        let value = loss.item();
        losses.push(value);

        let done = step + 1;
        let rate = (done - start) as f64 * tokens_per_step / clock.elapsed().as_secs_f64();
        bar.set_message(format!("loss {value:.4}  {rate:.0} tok/s"));
        bar.set_position(done);
        if !terminal && (done % report_every == 0 || done == start + 1 || done == stop) {
            println!("step {done:5}/{steps}  loss {value:.4}  {rate:.0} tok/s");
        }
        let every = args.checkpoint_every;
        if (every > 0 && done % every == 0) || done == stop {
            let path = save_checkpoint(dir, done, &meta, &gpt, &state, &losses)?;
            say(format!("step {done:5}: checkpoint {}", path.display()));
        }
    }
    bar.finish_and_clear();
    let secs = clock.elapsed().as_secs_f64();
    let trained = stop.saturating_sub(start);

    // Evaluate on the held-out text, write the loss curve.
    let val = held_out_loss(&gpt, held_out, t);
    let first = losses.first().copied().unwrap_or(f64::NAN);
    let tail = &losses[losses.len().saturating_sub(20)..];
    let recent = tail.iter().sum::<f64>() / tail.len() as f64;
    let uniform = (vocab.len() as f64).ln();
    plot_losses(&losses, start, uniform, "gpt_loss.png")?;
    println!("wrote gpt_loss.png; held-out loss {val:.4}");
    if losses.len() >= 50 {
        assert!(
            recent < 0.8 * first,
            "training did not converge: {first:.3} -> {recent:.3}"
        );
    }

    // Sample from a fresh model loaded from the latest checkpoint.
    let (_, path) = latest_checkpoint(dir)?.expect("written above");
    let mut reloaded = Gpt::new(&cfg, Key::new(1));
    nabla::io::load(&mut reloaded, path.join("model.safetensors"))?;
    let prompt: Vec<i64> = "The tape ".chars().map(encode).collect();
    let decode = |ids: &[i64]| ids.iter().map(|&i| vocab[i as usize]).collect::<String>();
    let greedy = sample(&reloaded, &prompt, 120, None);
    let warm = sample(&reloaded, &prompt, 120, Some((0.8, Key::new(7))));

    println!(
        "loss {first:.4} (ln {} = {:.4}) -> {recent:.4} (mean of the last {}) after {} steps; \
         this run: {trained} steps in {secs:.1} s, {:.0} tokens/s",
        vocab.len(),
        uniform,
        tail.len(),
        losses.len(),
        trained as f64 * tokens_per_step / secs.max(1e-9)
    );
    println!("greedy sample: {:?}", decode(&greedy));
    println!("sample at temperature 0.8 (key 7): {:?}", decode(&warm));
    Ok(())
}

/// SplitMix64: a well-mixed hash of one word.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A hash of the token ids, so a checkpoint is not resumed on other text
/// (48 bits: `Array::to_vec` reads `i64` elements through `f64`, exact
/// below 2^53).
fn fingerprint(data: &[i64]) -> u64 {
    data.iter().fold(DATA_SEED, |h, &v| mix(h ^ v as u64)) >> 16
}

/// The batch of step `step`: `BATCH` windows of `t` tokens and their
/// next tokens, at offsets hashed from the step number alone.
fn batch(data: &[i64], step: u64, t: usize) -> (Array, Array) {
    let (mut x, mut y) = (Vec::with_capacity(BATCH * t), Vec::with_capacity(BATCH * t));
    for b in 0..BATCH as u64 {
        let h = mix(mix(DATA_SEED ^ step).wrapping_add(b));
        let at = (h % (data.len() - t) as u64) as usize;
        x.extend_from_slice(&data[at..at + t]);
        y.extend_from_slice(&data[at + 1..at + t + 1]);
    }
    (
        Array::from_vec(x, &[BATCH, t]),
        Array::from_vec(y, &[BATCH, t]),
    )
}

/// The mean loss over 8 batches of held-out text, without the tape.
fn held_out_loss(gpt: &Gpt, data: &[i64], t: usize) -> f64 {
    let n: u64 = 8;
    nabla::no_grad(|| {
        (0..n)
            .map(|i| {
                let (x, y) = batch(data, u64::MAX - i, t);
                gpt.loss(&x, &y).item()
            })
            .sum::<f64>()
            / n as f64
    })
}

/// `n` more tokens after `prompt`: the likeliest each time, or drawn from
/// the softmax at a temperature with a fixed key (one `fold_in` per token).
fn sample(gpt: &Gpt, prompt: &[i64], n: usize, temperature: Option<(f64, Key)>) -> Vec<i64> {
    let context = gpt.wpe.weight.shape()[0];
    let mut ids = prompt.to_vec();
    for i in 0..n {
        let window = &ids[ids.len().saturating_sub(context)..];
        let logits =
            nabla::no_grad(|| gpt.forward(&Array::from_vec(window.to_vec(), &[1, window.len()])));
        let row: Vec<f64> = logits
            .slice_axis(1, window.len() - 1..window.len())
            .to_vec::<f32>()
            .into_iter()
            .map(f64::from)
            .collect();
        let next = match temperature {
            None => (0..row.len())
                .max_by(|&a, &b| row[a].total_cmp(&row[b]))
                .expect("a non-empty vocabulary"),
            Some((temp, key)) => {
                let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let weights: Vec<f64> = row.iter().map(|l| ((l - top) / temp).exp()).collect();
                let u = key.fold_in(i as u64).uniform(&[], DType::F64).item();
                let mut left = u * weights.iter().sum::<f64>();
                weights
                    .iter()
                    .position(|w| {
                        left -= w;
                        left < 0.0
                    })
                    .unwrap_or(weights.len() - 1)
            }
        };
        ids.push(next as i64);
    }
    ids
}

/// The checkpoint folders in `dir` (`step-NNNNNN`, complete ones only),
/// by step.
fn checkpoints(dir: &Path) -> Result<Vec<(u64, PathBuf)>, Error> {
    let mut found = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
        Err(e) => return Err(e.into()),
    };
    for entry in entries {
        let path = entry?.path();
        let step = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("step-"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(step) = step
            && ["model", "optimizer", "progress"]
                .iter()
                .all(|f| path.join(format!("{f}.safetensors")).is_file())
        {
            found.push((step, path));
        }
    }
    found.sort();
    Ok(found)
}

fn latest_checkpoint(dir: &Path) -> Result<Option<(u64, PathBuf)>, Error> {
    Ok(checkpoints(dir)?.pop())
}

/// Writes the model, the optimizer state (a tree too: per parameter its
/// step count and AdamW's two moments) and the progress (run settings and
/// the losses so far) into `dir/step-NNNNNN`, written beside it first and
/// renamed, so an interrupted save never looks like a checkpoint. Keeps
/// the latest `KEEP` checkpoints.
fn save_checkpoint(
    dir: &Path,
    step: u64,
    meta: &[u64],
    gpt: &Gpt,
    state: &State,
    losses: &[f64],
) -> Result<PathBuf, Error> {
    let path = dir.join(format!("step-{step:06}"));
    let partial = dir.join(format!(".step-{step:06}.partial"));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)?;
    }
    std::fs::create_dir_all(&partial)?;
    nabla::io::save(gpt, partial.join("model.safetensors"))?;
    nabla::io::save(state, partial.join("optimizer.safetensors"))?;
    let meta: Vec<i64> = meta.iter().map(|&v| v as i64).collect();
    nabla::io::save_arrays(
        [
            (
                "meta".to_string(),
                Array::from_vec(meta.clone(), &[meta.len()]),
            ),
            (
                "losses".to_string(),
                Array::from_vec(losses.to_vec(), &[losses.len()]),
            ),
        ],
        partial.join("progress.safetensors"),
    )?;
    if path.exists() {
        std::fs::remove_dir_all(&path)?;
    }
    std::fs::rename(&partial, &path)?;
    let all = checkpoints(dir)?;
    for (_, old) in &all[..all.len().saturating_sub(KEEP)] {
        std::fs::remove_dir_all(old)?;
    }
    Ok(path)
}

/// Fills `gpt` and `state` from the checkpoint at `path` and returns the
/// losses recorded so far; an error if it was written for another model,
/// run length, batch or text.
fn load_checkpoint(
    path: &Path,
    meta: &[u64],
    gpt: &mut Gpt,
    state: &mut State,
) -> Result<Vec<f64>, Error> {
    let progress = nabla::io::load_file(path.join("progress.safetensors"))?;
    let (Some(saved), Some(losses)) = (progress.get("meta"), progress.get("losses")) else {
        return Err(format!("{}: not a checkpoint of this example", path.display()).into());
    };
    let saved: Vec<u64> = saved
        .to_vec::<i64>()
        .into_iter()
        .map(|v| v as u64)
        .collect();
    if saved != meta {
        let names = [
            "vocab",
            "context",
            "layers",
            "heads",
            "embd",
            "batch",
            "characters",
            "steps",
            "text hash",
        ];
        let diff: Vec<String> = names
            .iter()
            .zip(saved.iter().zip(meta))
            .filter(|(_, (a, b))| a != b)
            .map(|(n, (a, b))| format!("{n} {a} (now {b})"))
            .collect();
        return Err(format!(
            "{} was written by another run ({}); resume with the same --steps, or start afresh \
             without --resume",
            path.display(),
            diff.join(", ")
        )
        .into());
    }
    nabla::io::load(gpt, path.join("model.safetensors"))?;
    nabla::io::load(state, path.join("optimizer.safetensors"))?;
    Ok(losses.to_vec::<f64>())
}

/// The loss curve: the loss per step (grey), its moving average over 25
/// steps (blue), the level of a uniform guess, ln(vocab) (red), and where a
/// resumed run picked up (green), each named in the legend (lower left:
/// the loss starts high, so that corner stays empty).
fn plot_losses(losses: &[f64], resumed_at: u64, uniform: f64, file: &str) -> Result<(), Error> {
    use plotters::prelude::*;
    if losses.is_empty() {
        return Ok(());
    }
    let top = losses.iter().copied().fold(uniform, f64::max) * 1.1;
    let n = losses.len() as f64;
    let window = 25;
    let average = (0..losses.len()).map(|i| {
        let w = &losses[i.saturating_sub(window - 1)..=i];
        (i as f64 + 1.0, w.iter().sum::<f64>() / w.len() as f64)
    });
    let mut series = vec![
        plot::Series::line(
            "loss per step",
            losses.iter().enumerate().map(|(i, &l)| (i as f64 + 1.0, l)),
            BLACK.mix(0.3),
            1,
        ),
        plot::Series::line(format!("mean of the last {window} steps"), average, BLUE, 3),
        plot::Series::line(
            format!("uniform guess: ln(vocab) = {uniform:.2}"),
            [(0.0, uniform), (n, uniform)],
            RED.mix(0.6),
            1,
        ),
    ];
    if resumed_at > 0 {
        let x = resumed_at as f64;
        series.push(plot::Series::line(
            format!("resumed after step {resumed_at}"),
            [(x, 0.0), (x, top)],
            RGBColor(0, 150, 0),
            2,
        ));
    }
    plot::Chart {
        title: format!("GPT training loss ({} steps)", losses.len()),
        x_label: "step".into(),
        y_label: "cross-entropy loss (nats per character)".into(),
        x: 0.0..n,
        y: 0.0..top,
        legend: SeriesLabelPosition::LowerLeft,
        series,
    }
    .save_png(file, (900, 520))
}
