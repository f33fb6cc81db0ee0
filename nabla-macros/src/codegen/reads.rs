//! What a primitive's reverse step reads (the op table's `reads`, from the
//! op registry): the arguments of its `rules::<op>::vjp_<k>` call, and the
//! shapes the forward sweep takes for it. A value the reverse sweep does
//! not mention is not kept: the pullback closure captures only what it
//! mentions, and tapes and branch holders hold only that (`held`).

use super::names::shape;
use crate::ir::{Function, Stmt, Tier, VarId};
use crate::optable::Read;
use proc_macro2::TokenStream;
use quote::quote;

/// The variable at position `j` of a reverse step's reads: value input `j`,
/// or the output after the inputs.
fn at(inputs: &[VarId], out: VarId, j: usize) -> VarId {
    inputs.get(j).copied().unwrap_or(out)
}

/// The read arguments of the reverse step for input `k` of
/// `out = op(inputs..)`: values as `&V`, shapes as `&shape_<name>`, in the
/// order inputs then output. A variadic op's step reads every part's shape.
/// In a function of floats every value is a scalar, so a shape is `&[]`.
pub fn args(f: &Function, s: &Stmt, k: usize) -> Vec<TokenStream> {
    let Stmt::Prim {
        out, op, inputs, ..
    } = s
    else {
        return Vec::new();
    };
    if op.variadic {
        let parts = inputs.iter().map(|&v| shape(f, v));
        return vec![quote!(&[#(&#parts[..]),*])];
    }
    let Some(reads) = op.reads.get(k) else {
        return Vec::new();
    };
    reads
        .iter()
        .enumerate()
        .filter_map(|(j, r)| {
            let v = at(inputs, *out, j);
            match r {
                Read::Value => Some(f.val(v)),
                Read::Shape if scalar(f) => Some(quote!(&[])),
                Read::Shape => {
                    let sv = shape(f, v);
                    Some(quote!(&#sv))
                }
                Read::Not => None,
            }
        })
        .collect()
}

/// Whether `f` is a function of floats (its values have no axes).
fn scalar(f: &Function) -> bool {
    matches!(f.tier, Tier::Scalar(_))
}

/// The variables whose shapes the reverse steps of statement `s` read and
/// the forward sweep takes: those of its active inputs' steps (none when
/// its output is inactive, or in a function of floats).
pub fn shapes_read(f: &Function, s: &Stmt, active: &[bool]) -> Vec<VarId> {
    let Stmt::Prim {
        out, op, inputs, ..
    } = s
    else {
        return Vec::new();
    };
    if !active[*out] || scalar(f) {
        return Vec::new();
    }
    if op.variadic {
        return inputs.clone();
    }
    let mut vs = Vec::new();
    for (k, reads) in op.reads.iter().enumerate() {
        if !inputs.get(k).is_some_and(|&v| active[v]) {
            continue;
        }
        for (j, r) in reads.iter().enumerate() {
            let v = at(inputs, *out, j);
            if *r == Read::Shape && !vs.contains(&v) {
                vs.push(v);
            }
        }
    }
    vs
}

/// `let shape_<name> = shape_vec(..);` for each shape `s`'s reverse steps
/// read that is not yet taken in this body (`taken`, by variable).
pub fn shape_bindings(f: &Function, s: &Stmt, active: &[bool], taken: &mut [bool]) -> TokenStream {
    let krate = &f.krate;
    let lets = shapes_read(f, s, active).into_iter().filter_map(|v| {
        if std::mem::replace(&mut taken[v], true) {
            return None;
        }
        let (sv, x) = (shape(f, v), f.val(v));
        Some(quote!(let #sv = #krate::Value::shape_vec(#x);))
    });
    quote!(#(#lets)*)
}

/// The shape names a body's statements bind for their reverse steps (its
/// own statements, not nested bodies').
pub fn shape_names(f: &Function, body: &[Stmt], active: &[bool]) -> Vec<proc_macro2::Ident> {
    let mut names = Vec::new();
    let mut seen = vec![false; f.vars.len()];
    for s in body {
        for v in shapes_read(f, s, active) {
            if !std::mem::replace(&mut seen[v], true) {
                names.push(shape(f, v));
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use quote::quote;
    use std::collections::HashSet;

    /// The identifiers of the `vjp_masked` program's pullback closure (what
    /// it captures is among them) and the tuple its loop tape pushes.
    fn pullback_and_tape(item: proc_macro2::TokenStream) -> (HashSet<String>, String) {
        // Unfused, so every operation is a step of its own.
        let out = crate::expand_differentiable(quote!(fuse = false), item).to_string();
        let masked = out.find("_vjp_masked <").expect("a vjp_masked program");
        let from = masked + out[masked..].find("move |").expect("a pullback");
        let to = out[from..].find("# [doc").map_or(out.len(), |n| from + n);
        let closure = &out[from..to];
        let idents = closure
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect();
        let tape = out[masked..from]
            .find(". push (")
            .map(|n| {
                let rest = &out[masked + n..from];
                rest[..rest.find(") ;").unwrap_or(rest.len())].to_string()
            })
            .unwrap_or_default();
        (idents, tape)
    }

    #[test]
    fn the_pullback_keeps_only_what_the_rules_read() {
        let (ids, _) = pullback_and_tape(quote! {
            fn f(x: &Array, w: &Array) -> Array {
                let h = x.matmul(w).tanh();
                nabla::sum(&(&h * &h))
            }
        });
        // tanh's step reads its output, the product its factors, the sum
        // only its input's shape; matmul's output and the product are not
        // kept.
        for kept in ["h", "shape_h", "shape_mul1", "x", "w"] {
            assert!(ids.contains(kept), "{kept} is read in reverse");
        }
        for dropped in ["matmul1", "mul1", "sum1"] {
            assert!(!ids.contains(dropped), "{dropped} is not read in reverse");
        }
    }

    #[test]
    fn a_loop_tapes_only_what_its_reverse_reads() {
        let (_, tape) = pullback_and_tape(quote! {
            fn f(x: &Array) -> Array {
                let mut y = x.clone();
                for _ in 0..3 {
                    let z = y.sin();
                    let big = &z + x;
                    y = nabla::sum(&big) * &z;
                }
                y
            }
        });
        // sin reads its input (y at the start of the iteration), the sum
        // only the shape of `big`, the product both factors; `big` itself
        // is not taped. (Loop bodies rename: `big` is `big_1` there.)
        let taped: Vec<&str> = tape
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && *w != "push")
            .collect();
        let has = |p: &str| {
            taped
                .iter()
                .any(|w| *w == p || w.starts_with(&format!("{p}_")))
        };
        assert!(has("shape_big") && has("z") && has("y"), "{tape}");
        assert!(!has("big"), "{tape}");
    }

    #[test]
    fn every_op_declares_its_reads_for_each_input() {
        for op in crate::optable::all() {
            if op.variadic {
                assert_eq!(op.reads, &[&[super::Read::Shape][..]][..], "{}", op.rule);
                continue;
            }
            assert_eq!(
                op.reads.len(),
                op.values,
                "{}: one entry per input",
                op.rule
            );
            for r in op.reads {
                assert_eq!(r.len(), op.values + 1, "{}: inputs then output", op.rule);
            }
        }
    }
}
