//! `nabla::optim` against torch.optim (`tests/fixtures/torch_optim.json`,
//! written by `scripts/torch_optim_reference.py`): three steps of each
//! setting in f32 and f64, functional and imperative, in-place passes and
//! op by op; plus copy-on-write, skipped leaves and errors.

use crate::common::*;
use nabla::optim::{Adam, AdamW, Optimizer, Schedule, Sgd, State, op_by_op};
use nabla::prelude::*;
use serde_json::Value as Json;

/// The optimizer a fixture case describes.
enum Opt {
    Sgd(Sgd),
    Adam(Adam),
    AdamW(AdamW),
}

/// The learning-rate schedule a case names (`torch_schedules.json`): the
/// same `Schedule` torch's `lr_scheduler`s stepped after every update.
fn schedule_of(s: &Json) -> Schedule {
    let a: Vec<f64> = s["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    match s["kind"].as_str().unwrap() {
        "linear" => Schedule::linear(a[0], a[1], a[2] as u64),
        "cosine" => Schedule::cosine(a[0], a[1] as u64, a[2]),
        "warmup_cosine" => Schedule::warmup_cosine(a[0], a[1], a[2] as u64, a[3] as u64, a[4]),
        other => panic!("unknown schedule {other}"),
    }
}

impl Opt {
    fn of(case: &Json) -> Opt {
        let opt = Opt::constant(case);
        match case.get("schedule") {
            None => opt,
            Some(s) => {
                let s = schedule_of(s);
                match opt {
                    Opt::Sgd(o) => Opt::Sgd(o.schedule(s)),
                    Opt::Adam(o) => Opt::Adam(o.schedule(s)),
                    Opt::AdamW(o) => Opt::AdamW(o.schedule(s)),
                }
            }
        }
    }

    fn constant(case: &Json) -> Opt {
        let s = &case["settings"];
        let f = |k: &str, d: f64| s.get(k).and_then(|v| v.as_f64()).unwrap_or(d);
        let betas = s
            .get("betas")
            .map(|b| (b[0].as_f64().unwrap(), b[1].as_f64().unwrap()));
        match case["optimizer"].as_str().unwrap() {
            "sgd" => Opt::Sgd(
                Sgd::new(f("lr", 0.0))
                    .momentum(f("momentum", 0.0))
                    .dampening(f("dampening", 0.0))
                    .nesterov(s.get("nesterov").is_some_and(|v| v.as_bool().unwrap()))
                    .weight_decay(f("weight_decay", 0.0)),
            ),
            "adam" => {
                let (b1, b2) = betas.unwrap_or((0.9, 0.999));
                Opt::Adam(
                    Adam::new(f("lr", 0.0))
                        .betas(b1, b2)
                        .eps(f("eps", 1e-8))
                        .weight_decay(f("weight_decay", 0.0)),
                )
            }
            "adamw" => {
                let (b1, b2) = betas.unwrap_or((0.9, 0.999));
                Opt::AdamW(
                    AdamW::new(f("lr", 0.0))
                        .betas(b1, b2)
                        .eps(f("eps", 1e-8))
                        .weight_decay(f("weight_decay", 0.01)),
                )
            }
            other => panic!("unknown optimizer {other}"),
        }
    }

    fn init(&self, p: &Array) -> State {
        match self {
            Opt::Sgd(o) => o.init(p),
            Opt::Adam(o) => o.init(p),
            Opt::AdamW(o) => o.init(p),
        }
    }

    fn update(&self, p: &mut Array, g: &Array, s: &mut State) {
        match self {
            Opt::Sgd(o) => o.update(p, g, s),
            Opt::Adam(o) => o.update(p, g, s),
            Opt::AdamW(o) => o.update(p, g, s),
        }
    }

    fn step(&self, p: &mut Array, s: &mut State) {
        match self {
            Opt::Sgd(o) => o.step(p, s),
            Opt::Adam(o) => o.step(p, s),
            Opt::AdamW(o) => o.step(p, s),
        }
    }
}

fn dtype(case: &Json) -> DType {
    if case["dtype"] == "f32" {
        DType::F32
    } else {
        DType::F64
    }
}

/// f32 results agree with PyTorch's to 1e-6 relative (the nn issue's
/// standard), f64 to 1e-13.
fn tol(case: &Json) -> f64 {
    if dtype(case) == DType::F32 {
        1e-6
    } else {
        1e-13
    }
}

/// A fixture's list of arrays, in `dt`.
fn arrays(j: &Json, dt: DType) -> Vec<Array> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|g| arr(g).cast(dt))
        .collect()
}

/// Replays every case of `torch_optim.json` with `run(opt, param, grads)
/// -> params after each step`.
fn replay(what: &str, run: impl Fn(&Opt, Array, &[Array]) -> Vec<Array>) {
    replay_file("torch_optim.json", "cases", 18, what, run)
}

/// Replays every case (`key`, at least `min` of them) of a fixture file.
fn replay_file(
    file: &str,
    key: &str,
    min: usize,
    what: &str,
    run: impl Fn(&Opt, Array, &[Array]) -> Vec<Array>,
) {
    let all = fixture(file);
    let cases = all[key].as_array().unwrap();
    assert!(cases.len() >= min, "{file} has {} cases", cases.len());
    for (i, case) in cases.iter().enumerate() {
        let dt = dtype(case);
        let opt = Opt::of(case);
        let p = arr(&case["param"]).cast(dt);
        let grads = arrays(&case["grads"], dt);
        let got = run(&opt, p, &grads);
        for (k, want) in case["after"].as_array().unwrap().iter().enumerate() {
            let label = format!(
                "{what}: case {i} ({} {} {} {}) after step {}",
                case["optimizer"],
                case["settings"],
                case.get("schedule").unwrap_or(&Json::Null),
                case["dtype"],
                k + 1
            );
            assert_eq!(got[k].dtype(), dt, "{label}: dtype");
            assert_close(&got[k], &arr(want), tol(case), &label);
        }
    }
}

fn functional(opt: &Opt, mut p: Array, grads: &[Array]) -> Vec<Array> {
    let mut s = opt.init(&p);
    grads
        .iter()
        .map(|g| {
            opt.update(&mut p, g, &mut s);
            p.clone()
        })
        .collect()
}

#[test]
fn functional_updates_match_torch_optim() {
    replay("functional, in place", functional);
}

#[test]
fn op_by_op_updates_match_torch_optim() {
    replay("functional, op by op", |o, p, g| {
        op_by_op(|| functional(o, p, g))
    });
}

#[test]
fn scheduled_updates_match_torch_lr_schedulers() {
    replay_file("torch_schedules.json", "runs", 8, "scheduled", functional);
    replay_file(
        "torch_schedules.json",
        "runs",
        8,
        "scheduled, op by op",
        |o, p, g| op_by_op(|| functional(o, p, g)),
    );
    replay_file(
        "torch_schedules.json",
        "runs",
        8,
        "scheduled, imperative",
        imperative,
    );
}

#[test]
fn imperative_steps_match_torch_optim() {
    replay("imperative", imperative);
}

fn imperative(opt: &Opt, p: Array, grads: &[Array]) -> Vec<Array> {
    let mut w = p.requires_grad();
    let mut s = opt.init(&w);
    grads
        .iter()
        .map(|g| {
            // backward of sum(w * g) leaves exactly g in w.grad().
            (&w * g).sum().backward();
            opt.step(&mut w, &mut s);
            w.zero_grad();
            assert!(w.is_leaf(), "the parameter stays a leaf");
            w.detach()
        })
        .collect()
}

#[test]
fn non_contiguous_parameters_and_gradients_update_like_contiguous_ones() {
    let opt = Adam::new(0.01).weight_decay(0.1);
    let p = nabla::random::Key::new(1).normal(&[6, 4], DType::F64);
    let g = nabla::random::Key::new(2).normal(&[6, 4], DType::F64);
    // Transposed views of (4, 6) arrays holding the same values.
    let view = |a: &Array| Array::from_vec(a.transpose().to_vec::<f64>(), &[4, 6]).transpose();
    let (mut pt, gt) = (view(&p), view(&g));
    assert_ne!(pt.strides(), p.strides());
    let mut pc = p.clone();
    let (mut s1, mut s2) = (opt.init(&pc), opt.init(&pt));
    for _ in 0..2 {
        opt.update(&mut pc, &g, &mut s1);
        opt.update(&mut pt, &gt, &mut s2);
    }
    assert_close(&pt, &pc, 0.0, "transposed parameter");
}

#[test]
fn an_update_never_changes_a_clone_of_the_parameter_or_state() {
    let opt = Sgd::new(0.5).momentum(0.9);
    let mut w = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
    let before = w.clone();
    let mut s = opt.init(&w);
    let g = Array::from_vec(vec![1.0f32, 1.0, 1.0], &[3]);
    opt.update(&mut w, &g, &mut s);
    let state_before = s.clone();
    opt.update(&mut w, &g, &mut s);
    assert_eq!(
        before.to_vec::<f32>(),
        vec![1.0, 2.0, 3.0],
        "a clone keeps its values"
    );
    assert_eq!(
        state_before.params[0].buffers[0].to_vec::<f32>(),
        vec![1.0; 3],
        "a cloned state keeps its values"
    );
    assert_eq!(s.params[0].buffers[0].to_vec::<f32>(), vec![1.9; 3]);
    assert_eq!(s.params[0].step.item(), 2.0);
    assert_eq!(g.to_vec::<f32>(), vec![1.0; 3], "the gradient is read only");
}

#[derive(Clone, Tree)]
struct Layer {
    w: Array,
    b: Array,
}

#[differentiable]
fn layer_loss(p: &Layer, x: &Array, y: &Array) -> Array {
    nabla::mse_loss(&(x.matmul(&p.w) + &p.b), y)
}

#[test]
fn trees_train_functionally_and_imperatively_alike() {
    let key = nabla::random::Key::new(7);
    let ks = key.split(3);
    let (x, y) = (
        ks[0].normal(&[16, 3], DType::F64),
        ks[1].normal(&[16, 2], DType::F64),
    );
    let start = Layer {
        w: ks[2].normal(&[3, 2], DType::F64),
        b: Array::zeros(&[2], DType::F64),
    };
    let opt = AdamW::new(0.05);
    let (mut pf, mut pi) = (
        start.clone(),
        Layer {
            w: start.w.clone().requires_grad(),
            b: start.b.clone().requires_grad(),
        },
    );
    let (mut sf, mut si) = (opt.init(&pf), opt.init(&pi));
    let first = layer_loss(&pf, &x, &y).item();
    for _ in 0..50 {
        let g = nabla::grad(layer_loss)(&pf, &x, &y);
        opt.update(&mut pf, &g, &mut sf);
        layer_loss(&pi, &x, &y).backward();
        opt.step(&mut pi, &mut si);
        pi.w.zero_grad();
        pi.b.zero_grad();
    }
    assert_close(&pi.w, &pf.w, 1e-12, "w: imperative vs functional");
    assert_close(&pi.b, &pf.b, 1e-12, "b: imperative vs functional");
    let last = layer_loss(&pf, &x, &y).item();
    assert!(last < 0.8 * first, "loss {first} -> {last}");
    assert_eq!(sf.params[1].step.item(), 50.0);
}

#[test]
fn leaves_without_a_gradient_are_skipped() {
    let opt = Adam::new(0.1);
    let mut ps = vec![
        Array::ones(&[2], DType::F32).requires_grad(),
        Array::ones(&[2], DType::F32).requires_grad(),
    ];
    let mut s = opt.init(&ps);
    (&ps[0] * 3.0).sum().backward();
    opt.step(&mut ps, &mut s);
    assert_eq!(ps[1].to_vec::<f32>(), vec![1.0, 1.0]);
    assert!(
        ps[0]
            .to_vec::<f32>()
            .iter()
            .all(|&v| (v - 0.9).abs() < 1e-6)
    );
    assert_eq!(
        (s.params[0].step.item(), s.params[1].step.item()),
        (1.0, 0.0)
    );
}

#[test]
#[should_panic(expected = "optimizer update: the parameters have 2 leaves, the gradients 1")]
fn a_gradient_tree_of_another_shape_is_refused() {
    let opt = Sgd::new(0.1);
    let mut ps = vec![Array::ones(&[2], DType::F32), Array::ones(&[2], DType::F32)];
    let mut s = opt.init(&ps);
    opt.update(&mut ps, &vec![Array::ones(&[2], DType::F32)], &mut s);
}

#[test]
#[should_panic(expected = "the gradient has shape [3] (f32) but its parameter has shape [2] (f32)")]
fn a_gradient_of_another_shape_is_refused() {
    let opt = Sgd::new(0.1);
    let mut w = Array::ones(&[2], DType::F32);
    let mut s = opt.init(&w);
    opt.update(&mut w, &Array::ones(&[3], DType::F32), &mut s);
}

#[test]
#[should_panic(expected = "Sgd::nesterov: Nesterov momentum needs a momentum > 0")]
fn nesterov_without_momentum_is_refused() {
    let _ = Sgd::new(0.1).nesterov(true);
}

#[test]
#[should_panic(
    expected = "optimizer update: the parameters have 2 leaves, the state 1; make the state with opt.init"
)]
fn a_state_of_another_tree_is_refused() {
    let opt = Adam::new(0.1);
    let mut ps = vec![
        Array::ones(&[2], DType::F32).requires_grad(),
        Array::ones(&[2], DType::F32).requires_grad(),
    ];
    let mut s = opt.init(&ps[0]);
    opt.step(&mut ps, &mut s);
}

/// `clip_grad_norm` against `torch.nn.utils.clip_grad_norm_` on three
/// gradients (a matrix, a vector, a scalar), clipping (`max_norm` 0.5) and
/// not (1e3), f32 and f64, functional and on `.grad()`.
#[test]
fn clipping_matches_torch_clip_grad_norm() {
    let all = fixture("torch_schedules.json");
    let cases = all["clip"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for case in cases {
        let dt = dtype(case);
        let max_norm = case["max_norm"].as_f64().unwrap();
        let grads = arrays(&case["grads"], dt);
        let want_norm = case["total_norm"].as_f64().unwrap();
        let label = format!("clip {} max_norm {max_norm}", case["dtype"]);
        let check = |norm: f64, got: &[Array], how: &str| {
            assert!(
                (norm - want_norm).abs() <= tol(case) * want_norm,
                "{label} {how}: norm {norm}, torch {want_norm}"
            );
            for (g, w) in got.iter().zip(case["clipped"].as_array().unwrap()) {
                assert_eq!(g.dtype(), dt);
                assert_close(g, &arr(w), tol(case), &format!("{label} {how}"));
            }
        };
        let mut g = grads.clone();
        let norm = nabla::optim::clip_grad_norm(&mut g, max_norm);
        check(norm, &g, "functional");

        let params: Vec<Array> = grads
            .iter()
            .map(|g| g.zeros_like().requires_grad())
            .collect();
        for (p, g) in params.iter().zip(&grads) {
            p.set_grad(g.clone());
        }
        let norm = nabla::optim::clip_leaf_grad_norm(&params, max_norm);
        let got: Vec<Array> = params.iter().map(|p| p.grad()).collect();
        check(norm, &got, "imperative");
    }
}

#[test]
fn schedules_hold_their_end_value_after_the_last_step() {
    let s = Schedule::warmup_cosine(0.0, 1.0, 10, 100, 0.1);
    assert_eq!(s.at(100), 0.1);
    assert_eq!(s.at(1_000_000), 0.1);
    assert!(s.at(99) > 0.1 && s.at(99) < 0.101);
    assert_eq!(Schedule::cosine(1.0, 10, 0.0).at(11), 0.0);
    assert_eq!(Schedule::linear(1.0, 0.0, 0).at(0), 0.0);
    // The step count lives in the state: a state saved and restored
    // resumes the schedule.
    let opt = Sgd::new(0.0).schedule(Schedule::linear(1.0, 0.0, 2));
    let mut w = Array::from_vec(vec![0.0f64], &[1]);
    let mut s = opt.init(&w);
    let g = Array::from_vec(vec![1.0f64], &[1]);
    opt.update(&mut w, &g, &mut s); // lr 1
    let mut resumed = s.clone();
    opt.update(&mut w, &g, &mut resumed); // lr 0.5
    opt.update(&mut w, &g, &mut resumed); // lr 0
    assert_eq!(w.to_vec::<f64>(), vec![-1.5]);
}

#[test]
#[should_panic(expected = "max_norm is -1; pass a norm >= 0")]
fn a_negative_max_norm_is_refused() {
    nabla::optim::clip_grad_norm(&mut vec![Array::scalar(1.0f64)], -1.0);
}
