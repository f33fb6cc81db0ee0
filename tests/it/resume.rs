//! Resuming training from a checkpoint (what `examples/gpt.rs --resume`
//! relies on): a tiny `Gpt` trained with AdamW (warm-up + cosine schedule,
//! weight decay, gradient clipping) for `K` steps, its model and optimizer
//! state saved with `nabla::io::save`, loaded into fresh values with
//! `nabla::io::load` and trained `K` more steps, gives bit for bit the
//! losses and parameters of an uninterrupted run of `2K` steps; a save and
//! load round trip of each tree is bit-identical. Two controls show the
//! comparison can fail: a resume with a fresh optimizer state, and one
//! whose restored state has its step counts reset (AdamW's bias
//! correction and the schedule read them), both lose the bit-identity.

use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{AdamW, Optimizer, Schedule, State, clip_leaf_grad_norm};
use nabla::prelude::*;
use nabla::tree::named_leaves;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Steps before the checkpoint, and after it.
const K: u64 = 20;
const BATCH: usize = 3;

fn config() -> GptConfig {
    GptConfig {
        vocab: 5,
        context: 4,
        layers: 1,
        heads: 2,
        embd: 8,
    }
}

fn optimizer() -> AdamW {
    AdamW::new(0.0)
        .weight_decay(0.1)
        .schedule(Schedule::warmup_cosine(0.0, 1e-2, 5, 2 * K, 1e-3))
}

/// A fixed token sequence over the vocabulary.
fn text() -> Vec<i64> {
    (0..61i64).map(|i| (i * i + 3 * i) % 7 % 5).collect()
}

/// SplitMix64.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The batch of step `step`, at offsets hashed from the step number alone
/// (as the example's), so a resumed run sees the same data.
fn batch(data: &[i64], step: u64, t: usize) -> (Array, Array) {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for b in 0..BATCH as u64 {
        let at = (mix(mix(step).wrapping_add(b)) % (data.len() - t) as u64) as usize;
        x.extend_from_slice(&data[at..at + t]);
        y.extend_from_slice(&data[at + 1..at + t + 1]);
    }
    (
        Array::from_vec(x, &[BATCH, t]),
        Array::from_vec(y, &[BATCH, t]),
    )
}

/// Trains `gpt` for the steps `steps` on the tape, as the example does,
/// and returns each step's loss.
fn train(gpt: &mut Gpt, state: &mut State, steps: Range<u64>) -> Vec<f64> {
    let (opt, data, t) = (optimizer(), text(), config().context);
    gpt.for_each_leaf_mut(&mut |p| *p = p.detach().requires_grad());
    steps
        .map(|step| {
            let (x, y) = batch(&data, step, t);
            let loss = gpt.loss(&x, &y);
            loss.backward();
            clip_leaf_grad_norm(gpt, 1.0);
            opt.step(gpt, state);
            gpt.for_each_leaf(&mut |p| p.zero_grad());
            loss.item()
        })
        .collect()
}

/// Each leaf's name, dtype, shape and element bits.
fn bits<T: nabla::tree::Tree + ?Sized>(tree: &T) -> Vec<(String, DType, Vec<usize>, Vec<u64>)> {
    named_leaves(tree)
        .into_iter()
        .map(|(name, a)| {
            let v: Vec<u64> = match a.dtype() {
                DType::F32 => a
                    .to_vec::<f32>()
                    .iter()
                    .map(|v| v.to_bits().into())
                    .collect(),
                DType::F64 => a.to_vec::<f64>().iter().map(|v| v.to_bits()).collect(),
                DType::I64 => a.to_vec::<i64>().iter().map(|&v| v as u64).collect(),
                DType::Bool => a.to_vec::<f64>().iter().map(|v| v.to_bits()).collect(),
            };
            (name, a.dtype(), a.shape().to_vec(), v)
        })
        .collect()
}

fn loss_bits(losses: &[f64]) -> Vec<u64> {
    losses.iter().map(|l| l.to_bits()).collect()
}

/// A fresh folder in the system's temporary folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "nabla_resume_{tag}_{}_{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The first `K` steps from a fresh model, saved into `dir`; returns the
/// trained model and state and their losses.
fn first_half(dir: &Path) -> (Gpt, State, Vec<f64>) {
    let mut gpt = Gpt::new(&config(), Key::new(0));
    let mut state = optimizer().init(&gpt);
    let losses = train(&mut gpt, &mut state, 0..K);
    nabla::io::save(&gpt, dir.join("model.safetensors")).unwrap();
    nabla::io::save(&state, dir.join("optimizer.safetensors")).unwrap();
    (gpt, state, losses)
}

/// A model and optimizer state unlike the trained ones, to load into.
fn fresh() -> (Gpt, State) {
    let gpt = Gpt::new(&config(), Key::new(1));
    let state = optimizer().init(&gpt);
    (gpt, state)
}

#[test]
fn resumed_training_matches_an_uninterrupted_run_bit_for_bit() {
    let mut whole = Gpt::new(&config(), Key::new(0));
    let mut whole_state = optimizer().init(&whole);
    let uninterrupted = train(&mut whole, &mut whole_state, 0..2 * K);
    assert!(
        uninterrupted[2 * K as usize - 1] < 0.7 * uninterrupted[0],
        "the tiny model should learn: {uninterrupted:?}"
    );

    let dir = TempDir::new("bits");
    let (_, _, before) = first_half(&dir.0);
    let (mut gpt, mut state) = fresh();
    nabla::io::load(&mut gpt, dir.0.join("model.safetensors")).unwrap();
    nabla::io::load(&mut state, dir.0.join("optimizer.safetensors")).unwrap();
    let after = train(&mut gpt, &mut state, K..2 * K);

    let resumed: Vec<f64> = before.into_iter().chain(after).collect();
    assert_eq!(
        loss_bits(&resumed),
        loss_bits(&uninterrupted),
        "losses of the resumed run {resumed:?}, uninterrupted {uninterrupted:?}"
    );
    assert!(
        bits(&gpt) == bits(&whole),
        "the resumed run ends on other parameters"
    );
    assert!(
        bits(&state) == bits(&whole_state),
        "the resumed run ends on another optimizer state"
    );
}

#[test]
fn model_and_optimizer_state_round_trip_bit_for_bit() {
    let dir = TempDir::new("round_trip");
    let (gpt, state, _) = first_half(&dir.0);
    let (mut gpt2, mut state2) = fresh();
    // Not already equal, so the comparison below means something.
    assert!(bits(&gpt2) != bits(&gpt));
    assert!(bits(&state2) != bits(&state));

    nabla::io::load(&mut gpt2, dir.0.join("model.safetensors")).unwrap();
    nabla::io::load(&mut state2, dir.0.join("optimizer.safetensors")).unwrap();
    assert!(
        bits(&gpt2) == bits(&gpt),
        "the model changed in the round trip"
    );
    assert!(
        bits(&state2) == bits(&state),
        "the optimizer state changed in the round trip"
    );

    // The state holds, per parameter, its step count (an i64 scalar) and
    // AdamW's two moments, shaped like the parameter; its file names them
    // by position ("0", "1", ..).
    let params = nabla::tree::leaves(&gpt2);
    let saved = nabla::io::load_file(dir.0.join("optimizer.safetensors")).unwrap();
    assert_eq!(saved.len(), 3 * params.len());
    assert_eq!(state2.params.len(), params.len());
    for (p, s) in params.iter().zip(&state2.params) {
        assert_eq!((s.step.dtype(), s.step.shape()), (DType::I64, &[][..]));
        assert_eq!(s.step.item(), K as f64);
        assert_eq!(s.buffers.len(), 2);
        assert!(s.buffers.iter().all(|b| b.shape() == p.shape()));
    }
}

/// The comparison above fails where the optimizer state is not restored,
/// or is restored without its step counts.
#[test]
fn resuming_without_the_optimizer_state_or_its_step_counts_diverges() {
    let mut whole = Gpt::new(&config(), Key::new(0));
    let mut whole_state = optimizer().init(&whole);
    let uninterrupted = train(&mut whole, &mut whole_state, 0..2 * K);
    let later = loss_bits(&uninterrupted[K as usize..]);

    let dir = TempDir::new("controls");
    first_half(&dir.0);

    // The model alone, with a fresh optimizer state.
    let (mut gpt, mut state) = fresh();
    nabla::io::load(&mut gpt, dir.0.join("model.safetensors")).unwrap();
    let model_only = loss_bits(&train(&mut gpt, &mut state, K..2 * K));
    // Same parameters at the first resumed step, so the same first loss ...
    assert_eq!(model_only[0], later[0]);
    // ... but other updates from there on.
    assert_ne!(model_only[1..], later[1..]);

    // The moments restored, the step counts back at 0.
    let (mut gpt, mut state) = fresh();
    nabla::io::load(&mut gpt, dir.0.join("model.safetensors")).unwrap();
    nabla::io::load(&mut state, dir.0.join("optimizer.safetensors")).unwrap();
    for p in &mut state.params {
        p.step = Array::scalar(0i64);
    }
    let steps_lost = loss_bits(&train(&mut gpt, &mut state, K..2 * K));
    assert_eq!(steps_lost[0], later[0]);
    assert_ne!(steps_lost[1..], later[1..]);
}
