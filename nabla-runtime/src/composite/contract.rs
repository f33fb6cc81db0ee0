//! `einsum` of two operands, written as `#[differentiable]` code: indices
//! found in one operand only are summed first, then the operands are
//! permuted to `[batch, free, contracted]` / `[batch, contracted, free]`,
//! contracted by one batched matmul and permuted to the output's order.

use crate::Array;
use nabla_macros::differentiable;

/// How `einsum` computes `spec` for operands of the given shapes.
#[doc(hidden)]
#[derive(Debug)]
pub struct EinsumPlan {
    /// Axes of each operand summed first (indices only it has).
    pub a_sum: Vec<usize>,
    pub b_sum: Vec<usize>,
    /// Permutations to `[batch, free, contracted]` (a) and
    /// `[batch, contracted, free]` (b), and the 3-D shapes after them.
    pub a_perm: Vec<usize>,
    pub b_perm: Vec<usize>,
    pub a_3d: [usize; 3],
    pub b_3d: [usize; 3],
    /// The product's shape `[batch.., a free.., b free..]` and the
    /// permutation to the output's index order.
    pub product: Vec<usize>,
    pub out_perm: Vec<usize>,
}

/// Parses `spec` (`"bij,bjk->bik"`; without `->` the output is the
/// indices that occur once, in alphabetical order, as in NumPy).
#[track_caller]
fn parse(spec: &str) -> (Vec<char>, Vec<char>, Vec<char>) {
    let spec: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    let (ins, out) = match spec.split_once("->") {
        Some((i, o)) => (i.to_string(), Some(o.to_string())),
        None => (spec.clone(), None),
    };
    let ops: Vec<&str> = ins.split(',').collect();
    assert!(
        ops.len() == 2,
        "einsum: `{spec}` has {} operand(s); nabla::einsum takes two (`\"ij,jk->ik\"`); \
         for one operand use sum_axes and permute",
        ops.len()
    );
    let letters = |s: &str| -> Vec<char> {
        let v: Vec<char> = s.chars().collect();
        assert!(
            v.iter().all(|c| c.is_ascii_alphabetic()),
            "einsum: `{spec}`: indices are letters (no `...` broadcasting); write every axis"
        );
        for (i, c) in v.iter().enumerate() {
            assert!(
                !v[..i].contains(c),
                "einsum: `{spec}` repeats `{c}` within one operand (a diagonal); take the diagonal first"
            );
        }
        v
    };
    let (a, b) = (letters(ops[0]), letters(ops[1]));
    let out = match out {
        Some(o) => letters(&o),
        None => {
            let mut once: Vec<char> = a
                .iter()
                .chain(&b)
                .copied()
                .filter(|c| a.contains(c) != b.contains(c))
                .collect();
            once.sort_unstable();
            once
        }
    };
    (a, b, out)
}

impl EinsumPlan {
    /// Checks `spec` against the shapes and builds the plan.
    #[track_caller]
    pub fn new(
        spec: &str,
        a_shape: impl AsRef<[usize]>,
        b_shape: impl AsRef<[usize]>,
    ) -> EinsumPlan {
        let (a_shape, b_shape) = (a_shape.as_ref(), b_shape.as_ref());
        let (a, b, out) = parse(spec);
        assert!(
            a.len() == a_shape.len() && b.len() == b_shape.len(),
            "einsum: `{spec}` names {} and {} axes but the operands have shapes {a_shape:?} and {b_shape:?}; give each operand one axis per letter",
            a.len(),
            b.len()
        );
        let size = |c: char| -> usize {
            let sa = a.iter().position(|&x| x == c).map(|i| a_shape[i]);
            let sb = b.iter().position(|&x| x == c).map(|i| b_shape[i]);
            match (sa, sb) {
                (Some(x), Some(y)) => {
                    assert!(
                        x == y,
                        "einsum: `{spec}`: index `{c}` has length {x} in the first operand ({a_shape:?}) \
                         and {y} in the second ({b_shape:?}); an index letter needs one length in both"
                    );
                    x
                }
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => {
                    panic!("einsum: `{spec}`: output index `{c}` is in neither operand")
                }
            }
        };
        for (i, c) in out.iter().enumerate() {
            assert!(
                !out[..i].contains(c),
                "einsum: `{spec}` repeats `{c}` in the output"
            );
            size(*c);
        }
        let (in_a, in_b, in_o) = (
            |c: &char| a.contains(c),
            |c: &char| b.contains(c),
            |c: &char| out.contains(c),
        );
        let batch: Vec<char> = out.iter().copied().filter(|c| in_a(c) && in_b(c)).collect();
        let a_free: Vec<char> = a.iter().copied().filter(|c| in_o(c) && !in_b(c)).collect();
        let b_free: Vec<char> = b.iter().copied().filter(|c| in_o(c) && !in_a(c)).collect();
        let contr: Vec<char> = a.iter().copied().filter(|c| in_b(c) && !in_o(c)).collect();
        let a_sum: Vec<usize> = (0..a.len())
            .filter(|&i| !in_b(&a[i]) && !in_o(&a[i]))
            .collect();
        let b_sum: Vec<usize> = (0..b.len())
            .filter(|&i| !in_a(&b[i]) && !in_o(&b[i]))
            .collect();
        let a_rest: Vec<char> = a.iter().copied().filter(|c| in_b(c) || in_o(c)).collect();
        let b_rest: Vec<char> = b.iter().copied().filter(|c| in_a(c) || in_o(c)).collect();
        let pos = |v: &[char], c: &char| v.iter().position(|x| x == c).unwrap();
        let prod = |v: &[char]| v.iter().map(|&c| size(c)).product::<usize>();
        let a_perm = batch
            .iter()
            .chain(&a_free)
            .chain(&contr)
            .map(|c| pos(&a_rest, c))
            .collect();
        let b_perm = batch
            .iter()
            .chain(&contr)
            .chain(&b_free)
            .map(|c| pos(&b_rest, c))
            .collect();
        let prod_idx: Vec<char> = batch
            .iter()
            .chain(&a_free)
            .chain(&b_free)
            .copied()
            .collect();
        EinsumPlan {
            a_sum,
            b_sum,
            a_perm,
            b_perm,
            a_3d: [prod(&batch), prod(&a_free), prod(&contr)],
            b_3d: [prod(&batch), prod(&contr), prod(&b_free)],
            product: prod_idx.iter().map(|&c| size(c)).collect(),
            out_perm: out.iter().map(|c| pos(&prod_idx, c)).collect(),
        }
    }
}

/// Einstein summation of two operands (`jnp.einsum`, `torch.einsum`):
/// `"bij,bjk->bik"` (batched matmul), `"bhqd,bhkd->bhqk"` (attention
/// scores), `"ij,ij->i"` (row-wise dot), `"i,j->ij"` (outer). Indices are
/// letters; an index in one operand only that is not in the output is
/// summed. Without `->` the output holds the indices that occur once, in
/// alphabetical order.
///
/// ```
/// # use nabla::*;
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
/// let b = Array::from_vec(vec![1.0f64, 0.0, 0.0, 1.0], &[2, 2]);
/// assert_eq!(nabla::einsum("ij,jk->ik", &a, &b).to_vec::<f64>(), a.to_vec::<f64>());
/// assert_eq!(nabla::einsum("ij,ij->i", &a, &a).to_vec::<f64>(), vec![5.0, 25.0]);
/// ```
#[differentiable(crate = crate)]
pub fn einsum(spec: &str, a: &Array, b: &Array) -> Array {
    let p = crate::composite::contract::EinsumPlan::new(spec, a.shape(), b.shape());
    let a1 = if p.a_sum.is_empty() {
        a.clone()
    } else {
        a.sum_axes(&crate::composite::contract::signed(&p.a_sum), false)
    };
    let b1 = if p.b_sum.is_empty() {
        b.clone()
    } else {
        b.sum_axes(&crate::composite::contract::signed(&p.b_sum), false)
    };
    let a3 = a1.permute(&p.a_perm).reshape(&p.a_3d);
    let b3 = b1.permute(&p.b_perm).reshape(&p.b_3d);
    a3.matmul(&b3).reshape(&p.product).permute(&p.out_perm)
}

/// Axes as the `&[isize]` the reductions take.
#[doc(hidden)]
pub fn signed(axes: &[usize]) -> Vec<isize> {
    axes.iter().map(|&a| a as isize).collect()
}
