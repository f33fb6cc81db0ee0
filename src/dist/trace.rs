//! Recording a program for the planner: [`Traced`] is a value type that
//! carries a shape, a dtype and a node id, and computes nothing. Running a
//! function's generated program at `V = Traced` ([`record_fn`]) appends
//! one [`Node`] per value-type method call to a graph under construction,
//! with the call's sharding rule from `rules.rs`: the graph the planner
//! reads, in the order the distributed run later meets the same calls.
//!
//! Conventions that make the two meet op by op:
//!
//! * `Traced` overrides exactly the required methods of `Value` and
//!   `ArrayValue`; every provided method (`permute_reshape`, `mul_scaled`,
//!   `add_into_slice`, `zeros_like`, `log`, …) keeps its default, which
//!   calls required ones. The distributed value type does the same.
//! * `item_f64` returns `0.0` and records nothing: plans are made from
//!   shapes, so a data-dependent branch takes the path a zero takes.
//!   `dtype`, `device` (always the CPU) and `shape_vec` record nothing.
//! * A custom op's output shape and dtype come from running its forward
//!   once on zero arrays of the operands' shapes and dtypes (its rule is
//!   replicated, `rules::custom`): the one place a recording computes.
//! * Shapes are checked as the `Array` ops check them (the same panics,
//!   naming the op, the shapes and the fix), at the caller's location.
//!
//! Recordings nest: each has its own graph on a thread-local stack, and a
//! value appends to the recording it came from; mixing values of two
//! recordings in one op panics.

use super::factors::Rule;
use super::graph::{Graph, Node, Source};
use crate::compose::{ArgsOf, Arity, DiffFn, Structure};
use crate::{Array, DType};
use std::cell::{Cell, RefCell};

#[cfg(test)]
mod check;
mod methods;
mod shapes;
#[cfg(test)]
mod tests;

/// A value of a program being recorded: its global shape, its dtype and
/// the node that computes it. Cloning is cheap enough (a shape).
#[derive(Clone, Debug)]
pub(crate) struct Traced {
    shape: Vec<usize>,
    dtype: DType,
    node: usize,
    recording: u64,
}

/// A graph under construction.
struct Recording {
    id: u64,
    graph: Graph,
}

thread_local! {
    /// The recordings in progress on this thread, innermost last.
    static RECORDINGS: RefCell<Vec<Recording>> = const { RefCell::new(Vec::new()) };
    /// The id of the next recording.
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
}

/// Bytes per element of a dtype.
fn elem_bytes(dtype: DType) -> usize {
    match dtype {
        DType::F32 => 4,
        DType::F64 | DType::I64 => 8,
        DType::Bool => 1,
    }
}

impl Traced {
    /// Appends a node computing `rule` from `operands` (all of one
    /// recording) and returns its value, shaped like `rule.out`.
    #[track_caller]
    fn op(rule: Rule, operands: &[&Traced], dtype: DType, source: Source) -> Traced {
        let recording = operands[0].recording;
        if let Some(o) = operands.iter().find(|o| o.recording != recording) {
            panic!(
                "{}: operands come from two recordings of a program (nodes {} and {}); a value recorded for \
                 the planner belongs to the recording that made it, pass it through that recording's function",
                rule.name, operands[0].node, o.node
            );
        }
        let ids = operands.iter().map(|o| o.node).collect();
        Traced::push(recording, rule, ids, dtype, source)
    }

    /// Appends a node to recording `recording` (a source when `operands`
    /// is empty).
    #[track_caller]
    fn push(
        recording: u64,
        rule: Rule,
        operands: Vec<usize>,
        dtype: DType,
        source: Source,
    ) -> Traced {
        let shape = rule.out.clone();
        let name = rule.name;
        let node = RECORDINGS.with(|r| {
            let mut r = r.borrow_mut();
            let rec = r.iter_mut().find(|rec| rec.id == recording)?;
            rec.graph.nodes.push(Node {
                rule,
                operands,
                elem: elem_bytes(dtype),
                source,
            });
            Some(rec.graph.nodes.len() - 1)
        });
        let Some(node) = node else {
            panic!(
                "{name}: this value outlived the recording that made it; values recorded for the planner \
                 are only used inside `record`'s closure"
            )
        };
        Traced {
            shape,
            dtype,
            node,
            recording,
        }
    }
}

/// Removes a recording from the stack when dropped, also when the
/// recorded function panics.
struct Guard(u64);

impl Guard {
    fn finish(self) -> Graph {
        let graph = take(self.0);
        std::mem::forget(self);
        graph
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        take(self.0);
    }
}

fn take(id: u64) -> Graph {
    RECORDINGS.with(|r| {
        let mut r = r.borrow_mut();
        match r.iter().position(|rec| rec.id == id) {
            Some(k) => r.remove(k).graph,
            None => Graph::default(),
        }
    })
}

/// Records `f` on inputs of the given shapes and dtypes: input `i`
/// becomes node `i` (`Source::Input(i)`, every axis free to split), each
/// value-type call inside `f` one node, and the values `f` returns the
/// graph's outputs.
#[track_caller]
pub(crate) fn record(
    inputs: &[(Vec<usize>, DType)],
    f: impl FnOnce(&[Traced]) -> Vec<Traced>,
) -> Graph {
    let id = NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    });
    RECORDINGS.with(|r| {
        r.borrow_mut().push(Recording {
            id,
            graph: Graph::default(),
        })
    });
    let guard = Guard(id);
    let ins: Vec<Traced> = inputs
        .iter()
        .enumerate()
        .map(|(i, (shape, dtype))| {
            Traced::push(
                id,
                Rule::source("input", shape),
                Vec::new(),
                *dtype,
                Source::Input(i),
            )
        })
        .collect();
    let outs = f(&ins);
    let mut graph = guard.finish();
    if let Some(o) = outs.iter().find(|o| o.recording != id) {
        panic!(
            "record: output {} of shape {:?} comes from another recording; return values computed from \
             this recording's inputs",
            o.node, o.shape
        );
    }
    graph.outputs = outs.iter().map(|o| o.node).collect();
    graph
}

/// Records `G`'s program on the shapes and dtypes of `args`: every
/// argument leaf is an input (in leaf order), `G::eval` runs at
/// `V = Traced`, and its output leaves are the graph's outputs.
#[track_caller]
pub(crate) fn record_fn<G: DiffFn>(args: &ArgsOf<G, Array>) -> Graph {
    let n = <G::Arity as Arity>::len(args);
    let inputs: Vec<(Vec<usize>, DType)> = (0..n)
        .map(|i| {
            let a = <G::Arity as Arity>::get(args, i);
            (a.shape().to_vec(), a.dtype())
        })
        .collect();
    record_on::<G, Array>(args, &inputs)
}

/// Records `G`'s program on arguments structured like `args` whose
/// leaves have the shapes and dtypes `inputs` (the leaves' values are not
/// read: `args` may hold `DArray`s).
#[track_caller]
pub(crate) fn record_on<G: DiffFn, W: Clone>(
    args: &<G::Arity as Arity>::Args<W>,
    inputs: &[(Vec<usize>, DType)],
) -> Graph {
    record(inputs, |ins| {
        let x = <G::Arity as Arity>::map(args, |i, _| ins[i].clone());
        let out = G::eval::<Traced>(&x);
        <G::Out as Structure>::leaves(out).into_iter().collect()
    })
}

impl Traced {
    /// This value laid out like argument leaf `leaf` (a `like_input` op,
    /// pinned to the leaf's layout in the graph).
    #[track_caller]
    pub(crate) fn like_input(&self, leaf: usize) -> Traced {
        let rule = super::rules::unary("like_input", &self.shape);
        let out = Traced::op(rule, &[self], self.dtype, Source::Op);
        RECORDINGS.with(|r| {
            let mut r = r.borrow_mut();
            if let Some(rec) = r.iter_mut().find(|rec| rec.id == out.recording) {
                rec.graph.pins.push((out.node, leaf));
            }
        });
        out
    }
}
