//! Choosing an op's split at run time, inside [`spmd`](super::spmd): from
//! the operands' layouts, the assignment of mesh axes to the op's factors
//! that moves the fewest bytes (each operand's own split is a candidate,
//! extended by the others' where they do not conflict), ties going to the
//! largest operand's split. Under a [`Plan`](super::Plan) the planner's
//! assignment is taken instead.

use super::factors::{Assignment, Rule};
use super::layout::{Layout, MeshShape};
use super::moves::reshard_bytes;

/// `a` extended by operand `k`'s splits where the factor is free and the
/// mesh axes unused.
fn merge(rule: &Rule, a: &mut Assignment, k: usize, layout: &Layout) {
    let used = |a: &Assignment| a.iter().flatten().fold(0u16, |m, &x| m | 1 << x);
    for (axis, f) in rule.operands[k].iter().enumerate() {
        let (Some(f), axes) = (f, &layout.dims[axis]) else {
            continue;
        };
        let f = *f as usize;
        if a[f].is_empty() && !axes.is_empty() && axes.iter().all(|&m| used(a) & (1 << m) == 0) {
            a[f] = axes.clone();
        }
    }
}

/// The bytes the operands move to meet `a`.
pub(crate) fn cost(
    rule: &Rule,
    a: &Assignment,
    from: &[&Layout],
    elem: usize,
    mesh: &MeshShape,
) -> u64 {
    let (targets, _) = rule.targets(a, from);
    (0..from.len())
        .map(|k| reshard_bytes(from[k], &targets[k], &rule.shapes[k], elem, mesh))
        .sum()
}

/// The cheapest assignment among the operands' splits (see the module
/// docs).
pub(crate) fn choose(rule: &Rule, from: &[&Layout], elem: usize, mesh: &MeshShape) -> Assignment {
    let nf = rule.factors as usize;
    let mut order: Vec<usize> = (0..from.len()).collect();
    let size = |k: usize| rule.shapes[k].iter().product::<usize>();
    order.sort_by_key(|&k| std::cmp::Reverse(size(k)));
    let mut best: Option<(u64, Assignment)> = None;
    let mut consider = |a: Assignment| {
        if !rule.valid(&a, mesh) {
            return;
        }
        let c = cost(rule, &a, from, elem, mesh);
        if best.as_ref().is_none_or(|(b, _)| c < *b) {
            best = Some((c, a));
        }
    };
    for &k in &order {
        let mut a = vec![Vec::new(); nf];
        merge(rule, &mut a, k, from[k]);
        for &j in &order {
            if j != k {
                merge(rule, &mut a, j, from[j]);
            }
        }
        // Drop the factors that make it invalid (indivisible lengths).
        for f in 0..nf {
            if !rule.valid(&a, mesh) {
                a[f].clear();
            }
        }
        consider(a);
    }
    consider(vec![Vec::new(); nf]);
    best.map(|(_, a)| a).unwrap_or_else(|| vec![Vec::new(); nf])
}

use std::cell::RefCell;

/// The planned assignments of the ops still to run on this thread, in
/// program order, with each op's name (to catch a program that does not
/// match its plan).
struct Planned {
    ops: Vec<(&'static str, Assignment)>,
    next: usize,
}

thread_local! {
    static PLANNED: RefCell<Option<Planned>> = const { RefCell::new(None) };
}

/// Runs `f` with each op taking the next of `ops` instead of choosing;
/// panics if `f` runs a different sequence of ops.
pub(crate) fn with_plan<R>(ops: Vec<(&'static str, Assignment)>, f: impl FnOnce() -> R) -> R {
    let previous = PLANNED.with(|p| p.borrow_mut().replace(Planned { ops, next: 0 }));
    struct Restore(Option<Option<Planned>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take().flatten();
            PLANNED.with(|p| *p.borrow_mut() = previous);
        }
    }
    let _restore = Restore(Some(previous));
    f()
}

/// The assignment for the op `rule` describes: the plan's next, or the
/// cheapest choice.
#[track_caller]
pub(crate) fn assignment(
    rule: &Rule,
    from: &[&Layout],
    elem: usize,
    mesh: &MeshShape,
) -> Assignment {
    let planned = PLANNED.with(|p| {
        let mut p = p.borrow_mut();
        let plan = p.as_mut()?;
        let Some((name, a)) = plan.ops.get(plan.next) else {
            panic!(
                "nabla::dist: the program runs more ops than its plan holds ({}); the plan was made for another program or other shapes",
                plan.ops.len()
            )
        };
        if *name != rule.name {
            panic!(
                "nabla::dist: op {} of the program is `{}` but its plan expects `{name}`; the plan was made for another program or other shapes",
                plan.next, rule.name
            );
        }
        plan.next += 1;
        Some(a.clone())
    });
    planned.unwrap_or_else(|| choose(rule, from, elem, mesh))
}
