//! `#[differentiable]` methods: a layer's `forward(&self, ..)` called as
//! `self.layers[i].forward(&h)` from other methods and as
//! `net.forward(&x)` from free functions; optional parts (`if let
//! Some(b) = &self.bias`), settings (`*self.gain`) and lengths
//! (`self.layers.len()`). The oracles are the imperative tape (the method
//! as written), central finite differences in f64, forward mode against
//! reverse mode, and a loop of single-example calls against `vmap`.

use nabla::prelude::*;
use nabla::testing::{check_grads, tree};
use nabla::tree::{Setting, leaves};

#[derive(Clone, Debug, Tree)]
struct Dense {
    w: Array,
    b: Option<Array>,
    gain: Setting<f64>,
}

impl Dense {
    #[differentiable]
    fn forward(&self, x: &Array) -> Array {
        let y = x.matmul(&self.w) * *self.gain;
        if let Some(b) = &self.b { y + b } else { y }
    }
}

#[derive(Clone, Debug, Tree)]
struct Net {
    layers: Vec<Dense>,
    head: Option<Dense>,
    residual: Setting<bool>,
}

impl Net {
    #[differentiable]
    fn hidden(&self, x: &Array) -> Array {
        let mut h = x.clone();
        for i in 0..self.layers.len() {
            let z = self.layers[i].forward(&h).tanh();
            h = if *self.residual { &h + &z } else { z };
        }
        h
    }

    /// Calls a method of the whole tree, then of an optional part.
    #[differentiable]
    fn forward(&self, x: &Array) -> Array {
        let h = self.hidden(x);
        if let Some(head) = &self.head {
            head.forward(&h)
        } else {
            h
        }
    }
}

#[differentiable]
fn loss(net: &Net, x: &Array) -> Array {
    net.forward(x).square().mean()
}

/// A part's method beside leaf reads of the same tree.
#[differentiable]
fn mixed(net: &Net, x: &Array) -> Array {
    (net.layers[1].forward(x).sin() * &net.layers[0].w.sum()).sum()
}

/// A gate whose elementwise chain is a fused region: the region's items
/// are local items of the method's hidden variants.
#[derive(Clone, Debug, Tree)]
struct Gate {
    g: Array,
}

impl Gate {
    #[differentiable]
    fn forward(&self, x: &Array) -> Array {
        ((x * &self.g).tanh() + 1.0) * 0.5 * x
    }
}

#[differentiable]
fn gated(gate: &Gate, x: &Array) -> Array {
    gate.forward(&gate.forward(x)).sum()
}

#[test]
fn fused_regions_inside_methods() {
    let gate = Gate {
        g: Key::new(8).normal(&[3], DType::F64),
    };
    let x = Key::new(9).normal(&[5, 3], DType::F64);
    let g: Gate = grad(gated)(&gate, &x);
    let mut t = gate.clone();
    t.g = t.g.requires_grad();
    t.forward(&t.forward(&x)).sum().backward();
    let e = 1e-6;
    for i in 0..3 {
        let at = |d: f64| {
            let mut v = gate.g.to_vec::<f64>();
            v[i] += d;
            gated(
                &Gate {
                    g: Array::from_vec(v, &[3]),
                },
                &x,
            )
            .item()
        };
        let fd = (at(e) - at(-e)) / (2.0 * e);
        let (a, b) = (g.g.to_vec::<f64>()[i], t.g.grad().to_vec::<f64>()[i]);
        assert!((a - b).abs() < 1e-12, "g[{i}]: {a} vs tape {b}");
        assert!((a - fd).abs() < 1e-7, "g[{i}]: {a} vs fd {fd}");
    }
}

fn dense(key: Key, bias: bool, gain: f64) -> Dense {
    let [kw, kb] = key.split2();
    Dense {
        w: kw.normal(&[3, 3], DType::F64) * 0.8,
        b: bias.then(|| kb.normal(&[3], DType::F64)),
        gain: Setting(gain),
    }
}

fn net(residual: bool, head: bool) -> Net {
    let k = Key::new(7).split(3);
    Net {
        layers: vec![dense(k[0], true, 0.9), dense(k[1], false, 1.1)],
        head: head.then(|| dense(k[2], true, 1.0)),
        residual: Setting(residual),
    }
}

#[test]
fn method_gradients_match_the_tape_and_finite_differences() {
    let x = Key::new(3).normal(&[4, 3], DType::F64);
    for (residual, head) in [(false, true), (true, false), (true, true)] {
        let p = net(residual, head);
        let g: Net = grad(loss)(&p, &x);
        // The tape runs the methods as written.
        let mut t = p.clone();
        t.for_each_leaf_mut(&mut |l| *l = l.clone().requires_grad());
        t.forward(&x).square().mean().backward();
        check_grads(loss, &(tree(&p), x.clone()), 1);
        let mut n = 0;
        for (gl, tl) in leaves(&g).iter().zip(leaves(&t)) {
            let (gv, tv) = (gl.to_vec::<f64>(), tl.grad().to_vec::<f64>());
            for i in 0..gv.len() {
                assert!(
                    (gv[i] - tv[i]).abs() < 1e-12,
                    "residual {residual} head {head}: leaf {n}[{i}] {} vs tape {}",
                    gv[i],
                    tv[i]
                );
            }
            n += 1;
        }
        assert_eq!(n, if head { 5 } else { 3 });
        assert_eq!(g.head.is_some(), head);
    }
}

#[test]
fn a_part_method_beside_leaf_reads() {
    let p = net(false, true);
    let x = Key::new(4).normal(&[2, 3], DType::F64);
    let g: Net = grad(mixed)(&p, &x);
    check_grads(mixed, &(tree(&p), x.clone()), 1);
    // The head and the first layer's bias are not read: zero gradients.
    assert!(g.head.unwrap().w.to_vec::<f64>().iter().all(|&v| v == 0.0));
}

#[test]
fn forward_mode_and_vmap_through_methods() {
    let p = net(true, true);
    let x = Key::new(5).normal(&[4, 3], DType::F64);
    let g: Net = grad(loss)(&p, &x);
    // jvp with the gradient as tangent is |g|².
    let (_, t) = nabla::jvp(loss)((&p, &x), (&g, &x.zeros_like()));
    let dot: f64 = leaves(&g).iter().map(|l| (l * l).sum().item()).sum();
    assert!(
        (t.item() - dot).abs() < 1e-10 * dot.max(1.0),
        "{} vs {dot}",
        t.item()
    );
    // vmap over examples equals a loop of single-example calls.
    let xs = Key::new(6).normal(&[5, 2, 3], DType::F64);
    let batched = nabla::vmap!(loss, in_axes = (None, 0))(&p, &xs);
    for i in 0..5 {
        let one = loss(&p, &xs.slice_axis(0, i..i + 1).reshape(&[2, 3])).item();
        let got = batched.slice_axis(0, i..i + 1).item();
        assert!((one - got).abs() < 1e-12, "example {i}: {got} vs {one}");
    }
}
