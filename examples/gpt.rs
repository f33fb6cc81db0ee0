//! A character-level GPT (`nabla::nn::models::Gpt`) trained on a short
//! text with the tape (`requires_grad`, `backward`), AdamW under a
//! warm-up + cosine schedule and gradient clipping, then saved, reloaded
//! and sampled greedily. The loss should fall from about ln(vocab) to well
//! under 1, and the sample should echo the text.
//!
//! Run: `cargo run --release --example gpt`

use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{AdamW, Optimizer, Schedule, clip_leaf_grad_norm};
use nabla::prelude::*;

const TEXT: &str = "the river runs to the sea, the sea runs to the sky, \
the sky rains on the hill, the hill feeds the river. \
round and round the water goes, and the river never ends. ";

fn main() -> Result<(), nabla::io::Error> {
    let mut vocab: Vec<char> = TEXT.chars().collect();
    vocab.sort_unstable();
    vocab.dedup();
    let encode = |c: char| vocab.binary_search(&c).expect("a character of the text") as i64;
    let data: Vec<i64> = TEXT.chars().map(encode).collect();

    let cfg = GptConfig {
        vocab: vocab.len(),
        context: 24,
        layers: 2,
        heads: 2,
        embd: 48,
    };
    let mut gpt = Gpt::new(&cfg, Key::new(0));
    gpt.for_each_leaf_mut(&mut |p| *p = p.clone().requires_grad());
    let params: usize = nabla::tree::leaves(&gpt).iter().map(|p| p.numel()).sum();
    println!(
        "{} characters, vocabulary {}, {params} parameters",
        data.len(),
        vocab.len()
    );

    let steps = 300;
    let opt = AdamW::new(0.0).schedule(Schedule::warmup_cosine(0.0, 3e-3, 30, steps, 3e-4));
    let mut state = opt.init(&gpt);
    let (batch, t) = (16, cfg.context);
    // Windows of the text at pseudo-random offsets (a fixed xorshift).
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut first = None;
    let mut last = 0.0;
    for step in 0..steps {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for _ in 0..batch {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed % (data.len() - t - 1) as u64) as usize;
            x.extend_from_slice(&data[at..at + t]);
            y.extend_from_slice(&data[at + 1..at + t + 1]);
        }
        let (x, y) = (
            Array::from_vec(x, &[batch, t]),
            Array::from_vec(y, &[batch, t]),
        );
        let loss = gpt.loss(&x, &y);
        loss.backward();
        clip_leaf_grad_norm(&gpt, 1.0);
        opt.step(&mut gpt, &mut state);
        gpt.for_each_leaf(&mut |p| p.zero_grad());
        last = loss.item();
        first.get_or_insert(last);
        if step % 50 == 0 || step == steps - 1 {
            println!("step {step:3}  loss {last:.4}");
        }
    }
    let first = first.expect("at least one step");
    println!(
        "loss fell from {first:.3} (ln {} = {:.3}) to {last:.3}",
        vocab.len(),
        (vocab.len() as f64).ln()
    );
    assert!(last < 0.5 * first, "training did not converge");

    // Save, reload into a fresh model, and sample from the reloaded one.
    let path = std::env::temp_dir().join("nabla_example_gpt.safetensors");
    nabla::io::save(&gpt, &path)?;
    let mut reloaded = Gpt::new(&cfg, Key::new(1));
    nabla::io::load(&mut reloaded, &path)?;
    std::fs::remove_file(&path).ok();

    let prompt = "the river";
    let mut ids: Vec<i64> = prompt.chars().map(encode).collect();
    for _ in 0..60 {
        let window = &ids[ids.len().saturating_sub(cfg.context)..];
        let logits = nabla::no_grad(|| {
            reloaded.forward(&Array::from_vec(window.to_vec(), &[1, window.len()]))
        });
        let last_row = logits.slice_axis(1, window.len() - 1..window.len());
        let row = last_row.to_vec::<f32>();
        let best = (0..row.len())
            .max_by(|&a, &b| row[a].total_cmp(&row[b]))
            .expect("a non-empty vocabulary");
        ids.push(best as i64);
    }
    let text: String = ids.iter().map(|&i| vocab[i as usize]).collect();
    println!("greedy sample: {text:?}");
    Ok(())
}
