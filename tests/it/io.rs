//! `nabla::io` (safetensors checkpoints) and `nabla::tree::named_leaves`:
//! round trips of every dtype and layout, every kind of mismatch reported
//! at once, bad files as error values, and PyTorch's own files
//! (`tests/fixtures/torch/`, written by PyTorch 2.15's safetensors): the
//! tiny GPT's weights load into a tree named like the PyTorch module, and
//! one `AdamW` / `SGD` step from PyTorch's gradients lands on PyTorch's
//! parameters.

use nabla::io::{self, Error, Mismatch};
use nabla::optim::{AdamW, Optimizer, Sgd};
use nabla::prelude::*;
use nabla::tree::named_leaves;
use std::path::PathBuf;

/// A fresh file path in the system's temporary folder, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str) -> TempFile {
        TempFile(std::env::temp_dir().join(format!(
            "nabla_io_{tag}_{}_{:?}.safetensors",
            std::process::id(),
            std::thread::current().id()
        )))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A file of PyTorch's tiny GPT (`tests/fixtures/torch/`).
fn torch_file(name: &str) -> PathBuf {
    crate::common::fixture_path(&format!("torch/{name}"))
}

#[derive(Clone, Tree)]
struct Linear {
    weight: Array,
    bias: Array,
}

#[derive(Clone, Tree)]
struct Mixed {
    layers: Vec<Linear>,
    steps: Array,
    mask: Array,
    pair: (Array, Array),
}

fn mixed(fill: bool) -> Mixed {
    let v = |shape: &[usize], dt: DType, k: f64| {
        let n: usize = shape.iter().product();
        if fill {
            (Array::arange(n, DType::F64).reshape(shape) * k + 0.25).cast(dt)
        } else {
            Array::zeros(shape, dt)
        }
    };
    Mixed {
        layers: vec![
            Linear {
                weight: v(&[3, 2], DType::F32, 1.5),
                bias: v(&[3], DType::F32, -1.0),
            },
            Linear {
                weight: v(&[1, 3], DType::F64, 1e-3),
                bias: v(&[1], DType::F64, 7.0),
            },
        ],
        steps: v(&[4], DType::I64, 3.0),
        mask: if fill {
            Array::from_vec(vec![true, false, true], &[3])
        } else {
            Array::from_vec(vec![false; 3], &[3])
        },
        pair: (v(&[], DType::F64, 1.0), v(&[0, 2], DType::F32, 1.0)),
    }
}

#[test]
fn names_follow_fields_and_indices() {
    let names: Vec<String> = named_leaves(&mixed(false))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        [
            "layers.0.weight",
            "layers.0.bias",
            "layers.1.weight",
            "layers.1.bias",
            "steps",
            "mask",
            "pair.0",
            "pair.1",
        ]
    );
}

#[test]
fn every_dtype_and_layout_round_trips() {
    let f = TempFile::new("round_trip");
    let mut m = mixed(true);
    // A transposed view and a reversed slice are saved row-major.
    m.layers[0].weight = Array::arange(6, DType::F32).reshape(&[2, 3]).transpose();
    assert_ne!(m.layers[0].weight.strides(), &[2, 1]);
    m.steps = Array::from_vec(vec![9i64, 8, 7, 6, 5, 4, 3, 2], &[8]).slice_axis(0, 0..4);
    io::save(&m, &f.0).unwrap();
    let mut back = mixed(false);
    io::load(&mut back, &f.0).unwrap();
    for ((name, a), (_, b)) in named_leaves(&m).into_iter().zip(named_leaves(&back)) {
        assert_eq!(a.shape(), b.shape(), "{name}");
        assert_eq!(a.dtype(), b.dtype(), "{name}");
        match a.dtype() {
            DType::F32 => assert_eq!(a.to_vec::<f32>(), b.to_vec::<f32>(), "{name}"),
            DType::F64 => assert_eq!(a.to_vec::<f64>(), b.to_vec::<f64>(), "{name}"),
            DType::I64 => assert_eq!(a.to_vec::<i64>(), b.to_vec::<i64>(), "{name}"),
            DType::Bool => assert_eq!(a.to_vec::<bool>(), b.to_vec::<bool>(), "{name}"),
        }
    }
    assert_eq!(back.steps.to_vec::<i64>(), vec![9, 8, 7, 6]);
    assert_eq!(back.layers[1].bias.to_vec::<f64>(), vec![0.25]);
    // The same file without a tree.
    let all = io::load_file(&f.0).unwrap();
    assert_eq!(all.len(), 8);
    assert_eq!(all["mask"].to_vec::<bool>(), vec![true, false, true]);
    assert_eq!(all["pair.1"].shape(), &[0, 2]);
}

#[test]
fn load_keeps_requires_grad() {
    let f = TempFile::new("requires_grad");
    io::save(&mixed(true), &f.0).unwrap();
    let mut m = mixed(false);
    m.layers[0].weight = m.layers[0].weight.clone().requires_grad();
    io::load(&mut m, &f.0).unwrap();
    assert!(m.layers[0].weight.is_leaf());
    assert!(!m.layers[0].bias.is_tracked());
    let loss = (m.layers[0].weight.clone() * 2.0).sum();
    loss.backward();
    assert_eq!(m.layers[0].weight.grad().to_vec::<f32>(), vec![2.0; 6]);
}

#[test]
fn every_mismatch_is_reported_and_the_tree_is_unchanged() {
    let f = TempFile::new("mismatch");
    let mut saved = mixed(true);
    saved.layers.pop(); // layers.1.* missing from the file
    saved.steps = Array::zeros(&[5], DType::I64); // wrong shape
    saved.pair.0 = Array::scalar(1.0f32); // wrong dtype
    io::save_arrays(
        named_leaves(&saved)
            .into_iter()
            .chain([("extra.weight".to_string(), Array::scalar(0.0f64))]),
        &f.0,
    )
    .unwrap();
    let mut m = mixed(false);
    let err = io::load(&mut m, &f.0).unwrap_err();
    let Error::Mismatch { mismatches, .. } = &err else {
        panic!("expected a mismatch, got {err}");
    };
    assert_eq!(
        mismatches,
        &[
            Mismatch::Missing {
                name: "layers.1.weight".into()
            },
            Mismatch::Missing {
                name: "layers.1.bias".into()
            },
            Mismatch::Shape {
                name: "steps".into(),
                expected: vec![4],
                found: vec![5]
            },
            Mismatch::DType {
                name: "pair.0".into(),
                expected: DType::F64,
                found: "F32".into()
            },
            Mismatch::Unexpected {
                name: "extra.weight".into()
            },
        ]
    );
    let text = err.to_string();
    assert!(text.contains("(5 differences)"), "{text}");
    assert!(
        text.contains("`extra.weight`: in the file, not in the tree"),
        "{text}"
    );
    // Nothing was written into the tree.
    assert_eq!(m.layers[0].weight.to_vec::<f32>(), vec![0.0; 6]);
}

#[test]
fn bad_files_are_error_values() {
    let missing = io::load_file("/nonexistent/dir/w.safetensors").unwrap_err();
    assert!(matches!(missing, Error::Io { .. }), "{missing}");

    let f = TempFile::new("garbage");
    std::fs::write(&f.0, b"not a safetensors file at all").unwrap();
    let bad = io::load(&mut mixed(false), &f.0).unwrap_err();
    assert!(matches!(bad, Error::Format { .. }), "{bad}");

    // A half-precision tensor, written byte by byte (8-byte header length,
    // JSON header, data).
    let header = br#"{"0":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend_from_slice(&[0x00, 0x3c, 0x00, 0x40]); // 1.0, 2.0
    std::fs::write(&f.0, &bytes).unwrap();
    let half = io::load_file(&f.0).unwrap_err();
    assert!(
        matches!(&half, Error::UnsupportedDType { name, dtype, .. } if name == "0" && dtype == "F16"),
        "{half}"
    );
    let mut tree = vec![Array::zeros(&[2], DType::F32)];
    let into_tree = io::load(&mut tree, &f.0).unwrap_err();
    assert!(
        into_tree
            .to_string()
            .contains("dtype f32 in the tree, F16 in the file")
    );
}

// The tiny GPT's parameters, named as in the PyTorch module
// (`tests/fixtures/torch/README.md`).

#[derive(Clone, Tree)]
struct Weight {
    weight: Array,
}

#[derive(Clone, Tree)]
struct Attn {
    qkv: Linear,
    proj: Linear,
}

#[derive(Clone, Tree)]
struct Mlp {
    fc: Linear,
    proj: Linear,
}

#[derive(Clone, Tree)]
struct Block {
    ln1: Linear,
    attn: Attn,
    ln2: Linear,
    mlp: Mlp,
}

#[derive(Clone, Tree)]
struct GptParams {
    wte: Weight,
    wpe: Weight,
    blocks: Vec<Block>,
    ln_f: Linear,
    lm_head: Weight,
}

fn gpt_zeros() -> GptParams {
    let (v, t, c, layers) = (32, 16, 32, 2);
    let z = |s: &[usize]| Array::zeros(s, DType::F32);
    let lin = |o: usize, i: usize| Linear {
        weight: z(&[o, i]),
        bias: z(&[o]),
    };
    let ln = || Linear {
        weight: z(&[c]),
        bias: z(&[c]),
    };
    GptParams {
        wte: Weight { weight: z(&[v, c]) },
        wpe: Weight { weight: z(&[t, c]) },
        blocks: (0..layers)
            .map(|_| Block {
                ln1: ln(),
                attn: Attn {
                    qkv: lin(3 * c, c),
                    proj: lin(c, c),
                },
                ln2: ln(),
                mlp: Mlp {
                    fc: lin(4 * c, c),
                    proj: lin(c, 4 * c),
                },
            })
            .collect(),
        ln_f: ln(),
        lm_head: Weight { weight: z(&[v, c]) },
    }
}

#[test]
fn pytorch_weights_load_by_name() {
    let path = torch_file("torch_gpt_tiny.safetensors");
    let all = io::load_file(&path).unwrap();
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(torch_file("torch_gpt_tiny.json")).unwrap())
            .unwrap();
    let params = config["parameters"].as_object().unwrap();
    assert_eq!(all.len(), params.len());
    for (name, shape) in params {
        let shape: Vec<usize> = serde_json::from_value(shape.clone()).unwrap();
        assert_eq!(all[name].shape(), &shape[..], "{name}");
        assert_eq!(all[name].dtype(), DType::F32, "{name}");
    }
    let mut gpt = gpt_zeros();
    io::load(&mut gpt, &path).unwrap();
    // Every leaf holds the file's array of its name (none is left zero).
    for (name, a) in named_leaves(&gpt) {
        assert_eq!(a.to_vec::<f32>(), all[&name].to_vec::<f32>(), "{name}");
        assert!(a.to_vec::<f32>().iter().any(|&v| v != 0.0), "{name}");
    }
    assert_eq!(gpt.blocks[1].mlp.proj.weight.shape(), &[32, 128]);
    // Saved again, the file holds the same arrays under the same names.
    let f = TempFile::new("gpt");
    io::save(&gpt, &f.0).unwrap();
    let again = io::load_file(&f.0).unwrap();
    for (name, a) in &all {
        assert_eq!(again[name].to_vec::<f32>(), a.to_vec::<f32>(), "{name}");
    }
}

/// The arrays of `expected` named `prefix.<name>`, in the tree's leaf
/// order, as a tree of the same shape as `like`.
fn tree_from(expected: &std::collections::BTreeMap<String, Array>, prefix: &str) -> GptParams {
    let like = gpt_zeros();
    let leaves = named_leaves(&like)
        .into_iter()
        .map(|(n, _)| expected[&format!("{prefix}.{n}")].clone());
    like.rebuild(&mut leaves.into_iter())
}

fn assert_close(got: &GptParams, want: &GptParams, tol: f32, what: &str) {
    for ((name, g), (_, w)) in named_leaves(got).into_iter().zip(named_leaves(want)) {
        for (i, (a, b)) in g.to_vec::<f32>().iter().zip(w.to_vec::<f32>()).enumerate() {
            assert!(
                (a - b).abs() <= tol * (1.0 + b.abs()),
                "{what}: {name}[{i}] = {a}, PyTorch {b}"
            );
        }
    }
}

#[test]
fn one_optimizer_step_from_pytorch_gradients_matches_pytorch() {
    let expected = io::load_file(torch_file("torch_gpt_tiny_expected.safetensors")).unwrap();
    let grads = tree_from(&expected, "grad");
    let mut start = gpt_zeros();
    io::load(&mut start, torch_file("torch_gpt_tiny.safetensors")).unwrap();

    let adamw = AdamW::new(1e-2)
        .betas(0.9, 0.95)
        .eps(1e-8)
        .weight_decay(0.1);
    let mut p = start.clone();
    let mut s = adamw.init(&p);
    adamw.update(&mut p, &grads, &mut s);
    assert_close(&p, &tree_from(&expected, "adamw1"), 1e-6, "AdamW");

    let sgd = Sgd::new(0.1)
        .momentum(0.9)
        .nesterov(true)
        .weight_decay(0.01);
    let mut p = start.clone();
    let mut s = sgd.init(&p);
    sgd.update(&mut p, &grads, &mut s);
    assert_close(&p, &tree_from(&expected, "sgd_momentum1"), 1e-6, "SGD");
}
