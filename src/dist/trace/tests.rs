//! Recording programs: graphs of transformed `#[differentiable]`
//! functions, checked op by op against the same program run on arrays.

use super::check::Checked;
use super::{Graph, Source, Traced, record, record_fn};
use crate::compose::{ArgsOf, Arity, DiffFn, Slot, Structure, TreeS};
use crate::nn::models::{Gpt, GptConfig};
use crate::nn::{Linear, Mlp};
use crate::random::Key;
use crate::{Array, ArrayValue, DType, Value};
use ndarray::Slice;
use std::panic::{AssertUnwindSafe, catch_unwind};

#[nabla::differentiable]
fn mlp_loss(w1: &Array, w2: &Array, x: &Array, y: &Array) -> Array {
    let h = x.matmul(w1).tanh();
    nabla::mse_loss(&h.matmul(w2), y)
}

#[nabla::differentiable]
fn tree_loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    nabla::mse_loss(&p.forward(x), y)
}

#[nabla::differentiable]
fn gpt_loss(p: &Gpt) -> Array {
    let idx = Array::from_vec(vec![1i64, 5, 2, 7, 0, 3], &[2, 3]);
    p.loss(&idx, &idx)
}

#[nabla::differentiable]
fn custom_loss(a: &Array, x: &Array) -> Array {
    nabla::sum(&nabla::softmax(&x.matmul(&nabla::linalg::inv(a)), -1))
}

/// `G`'s graph (the function value only names `G`).
fn graph_of<G: DiffFn>(_: G, args: &ArgsOf<G, Array>) -> Graph {
    record_fn::<G>(args)
}

/// `G`'s graph recorded at `Checked` (every node's shape and dtype equal
/// the array the same op computes), and the arrays of its outputs.
fn checked<G: DiffFn>(_: G, args: &ArgsOf<G, Array>) -> (Graph, Vec<Array>) {
    let n = <G::Arity as Arity>::len(args);
    let inputs: Vec<(Vec<usize>, DType)> = (0..n)
        .map(|i| {
            let a = <G::Arity as Arity>::get(args, i);
            (a.shape().to_vec(), a.dtype())
        })
        .collect();
    let mut arrays = Vec::new();
    let graph = record(&inputs, |ins| {
        let x = <G::Arity as Arity>::map(args, |i, a| {
            Checked::new("input", a.clone(), ins[i].clone())
        });
        let out: Vec<Checked> = <G::Out as Structure>::leaves(G::eval::<Checked>(&x))
            .into_iter()
            .collect();
        arrays = out.iter().map(|c| c.a.clone()).collect();
        out.into_iter().map(|c| c.t).collect()
    });
    (graph, arrays)
}

/// The two recordings are the same program: node for node, rule, operands,
/// element size and source; the same outputs.
fn assert_same(a: &Graph, b: &Graph) {
    assert_eq!(a.nodes.len(), b.nodes.len());
    for (k, (x, y)) in a.nodes.iter().zip(&b.nodes).enumerate() {
        assert_eq!(x.rule, y.rule, "node {k}");
        assert_eq!(
            (&x.operands, x.elem, x.source),
            (&y.operands, y.elem, y.source),
            "node {k}"
        );
    }
    assert_eq!(a.outputs, b.outputs);
}

/// The nodes `n` reads, directly or not (itself included).
fn ancestors(g: &Graph, n: usize) -> Vec<bool> {
    let mut seen = vec![false; g.nodes.len()];
    let mut todo = vec![n];
    while let Some(k) = todo.pop() {
        if !std::mem::replace(&mut seen[k], true) {
            todo.extend(&g.nodes[k].operands);
        }
    }
    seen
}

fn f64s(shape: &[usize], seed: u64) -> Array {
    Key::new(seed).normal(shape, DType::F64)
}

#[test]
fn value_and_grad_of_an_mlp_records_every_op_with_its_shape() {
    let (w1, w2, x, y) = (
        f64s(&[3, 5], 1),
        f64s(&[5, 2], 2),
        f64s(&[8, 3], 3),
        f64s(&[8, 2], 4),
    );
    let args = (w1.clone(), w2.clone(), x.clone(), y.clone());
    let f = crate::value_and_grad(mlp_loss);
    let g = graph_of(f, &args);
    let (gc, arrays) = checked(f, &args);
    assert_same(&g, &gc);
    assert!(g.nodes.len() > 8, "{} nodes", g.nodes.len());

    // The inputs, in argument order, and 8-byte elements throughout.
    assert_eq!(g.inputs(), vec![0, 1, 2, 3]);
    for (i, a) in [&w1, &w2, &x, &y].into_iter().enumerate() {
        assert_eq!(
            (g.nodes[i].source, &g.nodes[i].rule.out[..]),
            (Source::Input(i), a.shape())
        );
    }
    assert!(g.nodes.iter().all(|n| n.elem == 8));
    assert!(
        g.nodes
            .iter()
            .all(|n| n.operands.len() == n.rule.shapes.len())
    );
    assert!(
        g.nodes
            .iter()
            .enumerate()
            .all(|(k, n)| n.operands.iter().all(|&o| o < k))
    );

    // Two products forward, two back (∂/∂w1 only: w2's is not wanted).
    let matmuls: Vec<_> = g.nodes.iter().filter(|n| n.rule.name == "matmul").collect();
    assert_eq!(matmuls.len(), 4);
    for m in &matmuls {
        let (a, b) = (&m.rule.shapes[0], &m.rule.shapes[1]);
        assert_eq!(
            m.rule.flops,
            2.0 * (a[0] * a[1] * b[1]) as f64,
            "{a:?} @ {b:?}"
        );
    }
    let first = matmuls[0];
    assert_eq!(
        (&first.rule.shapes[..], first.rule.flops),
        (&[vec![8, 3], vec![3, 5]][..], 240.0)
    );

    // The outputs: the loss and ∂loss/∂w1, what value_and_grad computes,
    // each depending on all four inputs.
    let (l, gw1) = f(&w1, &w2, &x, &y);
    assert_eq!(g.outputs.len(), 2);
    assert_eq!(
        (arrays[0].item(), arrays[1].to_vec::<f64>()),
        (l.item(), gw1.to_vec::<f64>())
    );
    for (o, a) in g.outputs.iter().zip([&l, &gw1]) {
        assert_eq!(g.nodes[*o].rule.out, a.shape());
        assert_eq!(g.nodes[*o].source, Source::Op);
        let up = ancestors(&g, *o);
        assert!(up[..4].iter().all(|&u| u), "output {o} misses an input");
    }
}

#[test]
fn a_tree_argument_records_its_leaves_as_inputs() {
    let p = Mlp {
        fc: Linear::new(4, 8, true, Key::new(0)),
        proj: Linear::new(8, 4, true, Key::new(1)),
    };
    let (x, y) = (
        Key::new(2).normal(&[6, 4], DType::F32),
        Key::new(3).normal(&[6, 4], DType::F32),
    );
    let args = (<TreeS<Mlp> as Slot>::arg(&p), x.clone(), y.clone());
    let f = crate::grad(tree_loss);
    let g = graph_of(f, &args);
    let (gc, arrays) = checked(f, &args);
    assert_same(&g, &gc);

    // Leaves in tree order, then x and y; f32 elements throughout.
    let leaves = [
        &p.fc.weight,
        p.fc.bias.as_ref().unwrap(),
        &p.proj.weight,
        p.proj.bias.as_ref().unwrap(),
    ];
    let shapes: Vec<&[usize]> = leaves
        .iter()
        .map(|a| a.shape())
        .chain([x.shape(), y.shape()])
        .collect();
    let inputs: Vec<&[usize]> = g
        .inputs()
        .iter()
        .map(|&n| &g.nodes[n].rule.out[..])
        .collect();
    assert_eq!(inputs, shapes);
    assert!(g.nodes.iter().all(|n| n.elem == 4));

    // One gradient leaf per parameter, shaped like it, equal to grad's.
    let grads = f(&p, &x, &y);
    let want = [
        &grads.fc.weight,
        grads.fc.bias.as_ref().unwrap(),
        &grads.proj.weight,
        grads.proj.bias.as_ref().unwrap(),
    ];
    assert_eq!(g.outputs.len(), 4);
    for ((o, a), w) in g.outputs.iter().zip(&arrays).zip(want) {
        assert_eq!(
            (&g.nodes[*o].rule.out[..], a.to_vec::<f32>()),
            (w.shape(), w.to_vec::<f32>())
        );
    }
}

#[test]
fn a_gpt_step_records_like_arrays() {
    let cfg = GptConfig {
        vocab: 11,
        context: 8,
        layers: 2,
        heads: 2,
        embd: 16,
    };
    let gpt = Gpt::new(&cfg, Key::new(0));
    let args = (<TreeS<Gpt> as Slot>::arg(&gpt),);
    let f = crate::value_and_grad(gpt_loss);
    let g = graph_of(f, &args);
    let (gc, arrays) = checked(f, &args);
    assert_same(&g, &gc);
    // One input per parameter; the loss and one gradient per parameter.
    let n = crate::tree::leaves(&gpt).len();
    assert_eq!(
        (g.inputs().len(), g.outputs.len(), arrays.len()),
        (n, n + 1, n + 1)
    );
    assert!(g.nodes.iter().any(|n| n.rule.name == "index_select"));
}

#[test]
fn custom_ops_are_recorded_replicated_with_their_forward_shapes() {
    let a = &Array::eye(4, DType::F64) * 2.0 + f64s(&[4, 4], 5) * 0.1;
    let args = (a, f64s(&[3, 4], 6));
    let f = crate::value_and_grad(custom_loss);
    let g = graph_of(f, &args);
    let (gc, _) = checked(f, &args);
    assert_same(&g, &gc);

    let names: Vec<&str> = g.nodes.iter().map(|n| n.rule.name).collect();
    for name in ["inv", "softmax_rows", "softmax_rows_backward"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for n in g
        .nodes
        .iter()
        .filter(|n| n.rule.name.contains("inv") || n.rule.name.contains("softmax"))
    {
        assert_eq!(n.rule.factors, 0, "{}", n.rule.name);
        assert!(
            n.rule
                .output
                .iter()
                .chain(n.rule.operands.iter().flatten())
                .all(|f| f.is_none())
        );
    }
    let inv = g.nodes.iter().find(|n| n.rule.name == "inv").unwrap();
    assert_eq!(
        (&inv.rule.shapes[..], &inv.rule.out[..]),
        (&[vec![4, 4]][..], &[4, 4][..])
    );
}

#[test]
fn slices_with_steps_have_ndarray_shapes() {
    let x = f64s(&[7, 5, 4], 7);
    let cases: [[Slice; 3]; 3] = [
        [
            Slice::new(1, None, 2),
            Slice::new(-3, Some(-1), -1),
            Slice::from(..),
        ],
        [
            Slice::new(5, Some(2), 1),
            Slice::new(0, Some(5), 3),
            Slice::new(-4, None, -3),
        ],
        [
            Slice::new(-7, Some(7), 7),
            Slice::new(4, None, 1),
            Slice::new(2, Some(2), 1),
        ],
    ];
    for s in &cases {
        let g = record(&[(x.shape().to_vec(), DType::F64)], |ins| {
            let c = Checked::new("input", x.clone(), ins[0].clone());
            let y = c.slice(s);
            let back = y.slice_place(x.shape(), s);
            vec![y.t, back.t]
        });
        assert_eq!(g.nodes[2].rule.out, x.shape());
    }
}

#[test]
fn shape_ops_and_reductions_match_arrays() {
    let x = f64s(&[4, 6], 8);
    record(&[(vec![4, 6], DType::F64)], |ins| {
        let c = Checked::new("input", x.clone(), ins[0].clone());
        let r = c.reshape(&[2, 2, 6]).permute(&[2, 0, 1]);
        let m = r.max_axes(&[1], true);
        let v = r.chooser_vjp(&m, &[1], true, &m.ones_like());
        let j = r.chooser_jvp(&m, &[1], true, &v);
        let s = j
            .sum_axes(&[0, 2], false)
            .broadcast_to(&[3, 2])
            .sum_to_shape(&[1, 2]);
        let p = Checked::concat(&[c.clone(), c.index_select(0, &[3, 0])], 0);
        let q = p
            .index_add(&[2, 6], 0, &[1, 0, 0, 1, 1, 0])
            .cumsum_axis(1, true);
        let mask = x.gt(&x.zeros_like());
        let w = Checked::select(&mask, &c, &c.lift(&Array::scalar(0.0f64)));
        let k = w
            .cmp_mask(&c, crate::CompareOp::Gt)
            .min_axes(&[1], false)
            .prod_axes(&[0], false);
        vec![
            s.t,
            q.t,
            k.t,
            c.full_like(1.0)
                .stop_gradient()
                .mul_scalar(2.0)
                .add_scalar(1.0)
                .t,
        ]
    });
}

#[test]
fn bad_shapes_panic_naming_the_op_and_the_shapes() {
    let msg = |f: &dyn Fn(&[Traced]) -> Traced| {
        let e = catch_unwind(AssertUnwindSafe(|| {
            record(
                &[
                    (vec![2, 3], DType::F64),
                    (vec![4, 3], DType::F64),
                    (vec![2, 3], DType::F32),
                ],
                |x| vec![f(x)],
            )
        }))
        .expect_err("should panic");
        e.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    assert!(
        msg(&|x| x[0].add(&x[1])).starts_with("add: shapes [2, 3] and [4, 3] do not broadcast")
    );
    assert!(
        msg(&|x| x[0].matmul(&x[1]))
            .starts_with("matmul: inner dimensions differ, [2, 3] @ [4, 3]")
    );
    assert!(
        msg(&|x| x[0].mul(&x[2])).starts_with("mul: dtype mismatch, f64 [2, 3] and f32 [2, 3]")
    );
    assert!(msg(&|x| x[0].reshape(&[5])).starts_with("reshape: cannot reshape [2, 3]"));
    assert!(msg(&|x| x[0].sum_axes(&[2], false)).starts_with("sum_axes: axis 2 is out of range"));
    assert!(
        msg(&|x| x[0].index_select(1, &[3])).starts_with("index_select: index 3 is out of bounds")
    );
    assert!(
        msg(&|x| Traced::concat(&[x[0].clone(), x[1].clone()], 1)).starts_with("concat: arrays")
    );
    assert!(
        msg(&|x| x[0].slice(&[Slice::from(..); 2].map(|s| Slice { step: 0, ..s })))
            .contains("step of 0")
    );
    // A panicking recording leaves no graph behind: the next one starts clean.
    let g = record(&[(vec![2], DType::F64)], |x| vec![x[0].exp()]);
    assert_eq!(g.nodes.len(), 2);
}

#[test]
fn nested_recordings_keep_their_own_graphs() {
    let mut inner = Graph::default();
    let outer = record(&[(vec![3], DType::F64)], |x| {
        let a = x[0].sin();
        inner = record(&[(vec![2, 2], DType::F64)], |y| vec![y[0].matmul(&y[0])]);
        let mixed = catch_unwind(AssertUnwindSafe(|| {
            record(&[(vec![3], DType::F64)], |y| vec![y[0].add(&a)]);
        }));
        assert!(mixed.is_err(), "an op on values of two recordings panics");
        vec![a.cos()]
    });
    // A value used after its recording ended panics instead of writing
    // into another graph.
    let mut kept = Vec::new();
    record(&[(vec![3], DType::F64)], |x| {
        kept = x.to_vec();
        vec![]
    });
    assert!(catch_unwind(AssertUnwindSafe(|| kept[0].exp())).is_err());
    let names = |g: &Graph| g.nodes.iter().map(|n| n.rule.name).collect::<Vec<_>>();
    assert_eq!(names(&outer), ["input", "sin", "cos"]);
    assert_eq!(names(&inner), ["input", "matmul"]);
    assert_eq!(
        (outer.outputs.clone(), inner.outputs.clone()),
        (vec![2], vec![1])
    );
}

#[test]
fn item_records_nothing_and_reads_zero() {
    let g = record(&[(vec![], DType::F64)], |x| {
        assert_eq!(x[0].item_f64(), 0.0);
        assert_eq!(
            (x[0].dtype(), x[0].device(), x[0].shape_vec().len()),
            (DType::F64, crate::Device::Cpu, 0)
        );
        vec![x[0].clone()]
    });
    assert_eq!((g.nodes.len(), g.outputs.clone()), (1, vec![0]));
}

#[nabla::differentiable]
fn batched_det_loss(a: &Array) -> Array {
    nabla::linalg::det(a).sum()
}

#[test]
fn batch_wise_custom_ops_record_their_batch_from_one_element() {
    // `det` is batch-wise over `[.., n, n]`: the recording runs it on one
    // matrix and gives the output the batch back, `[5]` here.
    let a = &Array::eye(3, DType::F64) * 2.0 + f64s(&[5, 3, 3], 7) * 0.1;
    let args = (a,);
    let f = crate::value_and_grad(batched_det_loss);
    let g = graph_of(f, &args);
    let (gc, _) = checked(f, &args);
    assert_same(&g, &gc);
    let det = g
        .nodes
        .iter()
        .find(|n| n.rule.name.contains("det"))
        .expect("a det node");
    assert_eq!(det.rule.out, vec![5]);
    assert_eq!(det.rule.factors, 1, "the batch is one factor");
    assert_eq!(det.rule.output[0], det.rule.operands[0][0]);
}
