//! Binomial checkpointing of loops (Revolve; Griewank & Walther, ACM TOMS
//! 26(1), 2000): reverse mode through `n` steps of a loop keeping at most
//! `snapshots` loop-carried states (the loop's initial state included) and
//! one step's residuals, with the least possible number of recomputed
//! steps.
//!
//! `#[nabla::checkpoint(snapshots = 20)] for i in 0..n { .. }` inside a
//! `#[differentiable]` function makes the macro call this module. A loop is
//! described by three closures over its carried state `S`:
//!
//! * `advance(i, s) -> s'` runs iteration `i` plainly (no residuals kept);
//! * `record(i, s) -> (s', r)` runs iteration `i` keeping its residuals `r`
//!   (the VJP's forward sweep of the body);
//! * `reverse(i, r, c) -> c'` is iteration `i`'s reverse sweep: the carried
//!   cotangent after the iteration in, the one before it out.
//!
//! ```
//! use nabla::Value;
//!
//! #[nabla::differentiable]
//! fn decay(x: f64) -> f64 {
//!     let mut y = x;
//!     #[nabla::checkpoint(snapshots = 4)]
//!     for _ in 0..1000 {
//!         y = y - 0.001 * y * y;
//!     }
//!     y
//! }
//!
//! #[nabla::differentiable]
//! fn decay_taped(x: f64) -> f64 {
//!     let mut y = x;
//!     for _ in 0..1000 {
//!         y = y - 0.001 * y * y;
//!     }
//!     y
//! }
//!
//! fn main() {
//!     // Four stored states instead of a 1000-entry tape; same gradient.
//!     let g = nabla::grad(decay)(0.5);
//!     assert_eq!(g, nabla::grad(decay_taped)(0.5));
//! }
//! ```
//!
//! [`Revolve::forward`] runs the loop once, storing the snapshots the
//! schedule will need and the last iteration's residuals;
//! [`Revolve::reverse`] walks the iterations backwards, restoring snapshots
//! and re-advancing from them.
//!
//! **The schedule.** To reverse `l` steps from a stored state with `s`
//! snapshot slots (that state's slot included), let `r` be the smallest
//! integer with `C(s + r, s) ≥ l`. Advance `m` steps, store that state,
//! reverse the last `l − m` steps with `s − 1` slots, free the slot, then
//! reverse the first `m` steps with `s` slots. Any `m` in
//! `[max(l − C(s−1+r, r), C(s+r−2, s)), min(C(s+r−1, s), l − C(s+r−2, s−1))]`
//! is optimal, and the total number of `advance` calls is then
//! [`min_forward_steps`]`(l, s) = r·l − C(s + r, s + 1)` (for `l ≥ 1`), the
//! minimum over all schedules; every step is also `record`ed exactly once.
//! With one slot the schedule is the quadratic `l(l−1)/2`.

/// `C(s + r, s)` (binomial coefficient; 0 for negative `r`), saturating.
fn beta(s: usize, r: i64) -> u128 {
    if r < 0 {
        return 0;
    }
    // C(s + r, r) = Π_{k=1..r} (s + k) / k, exact at every step.
    let mut b: u128 = 1;
    for k in 1..=r as u128 {
        b = match b.checked_mul(s as u128 + k) {
            Some(p) => p / k,
            None => return u128::MAX,
        };
    }
    b
}

/// The repetition number: the smallest `r` with `C(s + r, s) ≥ l`.
fn repetitions(l: usize, s: usize) -> i64 {
    let mut r = 0;
    while beta(s, r) < l as u128 {
        r += 1;
    }
    r
}

/// The number of plain forward steps (`advance` calls) an optimal schedule
/// needs to reverse `n` steps with `snapshots` stored states (the initial
/// state's included): `r·n − C(s + r, s + 1)` with `r` the smallest integer
/// such that `C(s + r, s) ≥ n`. Every step is also run once with its
/// residuals kept (`n` more step evaluations), as in a plain taped loop.
///
/// ```
/// use nabla::revolve::min_forward_steps;
///
/// assert_eq!(min_forward_steps(10, 1), 45); // one slot: quadratic
/// assert_eq!(min_forward_steps(10, 10), 9); // enough slots: each step once
/// assert_eq!(min_forward_steps(10_000, 20), 37_976);
/// ```
///
/// # Panics
/// If `snapshots` is 0 and `n > 1`.
pub fn min_forward_steps(n: usize, snapshots: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    assert!(snapshots >= 1, "revolve: at least one snapshot is needed");
    let r = repetitions(n, snapshots);
    let t = r as u128 * n as u128 - beta(snapshots + 1, r - 1);
    t as usize
}

/// Where to store the next snapshot when reversing `l ≥ 2` steps with `s ≥
/// 2` slots: the largest optimal number of steps to advance first,
/// `min(C(s+r−1, s), l − 1, l − C(s+r−2, s−1))`.
fn split(l: usize, s: usize) -> usize {
    let (l, s) = (l as u64, s as u64);
    // r and C(s + r − 1, s) incrementally: C(s + r, s) = C(s + r − 1, s) ·
    // (s + r) / r (saturating: only compared with l).
    let (mut r, mut below, mut at) = (0u64, 0u64, 1u64);
    while at < l {
        r += 1;
        below = at;
        at = mul_div(at, s + r, r);
    }
    if r == 0 {
        return 1;
    }
    // C(s + r − 2, s − 1) = C(s + r − 1, s) · s / (s + r − 1).
    let left = mul_div(below, s, s + r - 1);
    below.min(l - 1).min(l.saturating_sub(left)).max(1) as usize
}

/// `a · b / c`, exact, saturating at `u64::MAX`; 64-bit arithmetic unless
/// the product overflows (128-bit division is a slow library call).
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p / c,
        None => u64::try_from(a as u128 * b as u128 / c as u128).unwrap_or(u64::MAX),
    }
}

/// The snapshots of one loop between its forward and reverse sweeps.
///
/// ```
/// use nabla::revolve::Revolve;
///
/// // y = x · 2ⁿ, computed step by step; dy/dx by reverse mode.
/// let (n, snapshots) = (100, 4);
/// let advance = |_i: usize, x: f64| x * 2.0;
/// let record = |_i: usize, x: f64| (x * 2.0, ());
/// let (y, tape) = Revolve::forward(n, snapshots, 3.0, advance, record);
/// assert_eq!(y, 3.0 * 2f64.powi(100));
/// let dx = tape.reverse(1.0, advance, record, |_i, (), ct: f64| ct * 2.0);
/// assert_eq!(dx, 2f64.powi(100));
/// ```
pub struct Revolve<S, R> {
    n: usize,
    snapshots: usize,
    /// Stored states, innermost last: `(position, state before it)`.
    stack: Vec<(usize, S)>,
    /// The residuals of the last iteration.
    last: Option<R>,
}

impl<S: Clone, R> Revolve<S, R> {
    /// Runs `n` iterations from `init` and returns the final state with
    /// the snapshots the reverse sweep needs (at most `snapshots` states).
    ///
    /// ```
    /// use nabla::revolve::Revolve;
    ///
    /// let (y, tape) = Revolve::forward(3, 2, 1.0, |_, x: f64| x + 1.0, |_, x: f64| (x + 1.0, x));
    /// assert_eq!(y, 4.0);
    /// # let _ = tape.reverse(1.0, |_, x: f64| x + 1.0, |_, x: f64| (x + 1.0, x), |_, _, c: f64| c);
    /// ```
    ///
    /// # Panics
    /// If `snapshots` is 0.
    pub fn forward(
        n: usize,
        snapshots: usize,
        init: S,
        mut advance: impl FnMut(usize, S) -> S,
        mut record: impl FnMut(usize, S) -> (S, R),
    ) -> (S, Self) {
        assert!(
            snapshots >= 1,
            "revolve: at least one snapshot is needed (snapshots = 0)"
        );
        let mut tape = Revolve {
            n,
            snapshots,
            stack: Vec::with_capacity(snapshots.min(n)),
            last: None,
        };
        if n == 0 {
            return (init, tape);
        }
        // The first descent of the schedule: split [a, n) until one step
        // is left (or no slot is), then record the last iteration.
        let mut a = 0;
        tape.stack.push((0, init.clone()));
        let mut state = init;
        while n - a > 1 {
            let free = snapshots - tape.stack.len();
            if free == 0 {
                for i in a..n - 1 {
                    state = advance(i, state);
                }
                break;
            }
            let m = a + split(n - a, free + 1);
            for i in a..m {
                state = advance(i, state);
            }
            tape.stack.push((m, state.clone()));
            a = m;
        }
        let (out, r) = record(n - 1, state);
        tape.last = Some(r);
        (out, tape)
    }

    /// The reverse sweep: `ct` is the cotangent of the final state; returns
    /// the cotangent of the initial state. `advance` and `record` must
    /// compute what they computed in [`forward`](Self::forward).
    ///
    /// ```
    /// use nabla::revolve::Revolve;
    ///
    /// // y = x², three times: dy/dx = 8 x⁷; the residual is the input.
    /// let step = |_: usize, x: f64| x * x;
    /// let record = |_: usize, x: f64| (x * x, x);
    /// let (_, tape) = Revolve::forward(3, 1, 1.5, step, record);
    /// let dx = tape.reverse(1.0, step, record, |_, x, ct: f64| 2.0 * x * ct);
    /// assert_eq!(dx, 8.0 * 1.5f64.powi(7));
    /// ```
    pub fn reverse<C>(
        mut self,
        ct: C,
        mut advance: impl FnMut(usize, S) -> S,
        mut record: impl FnMut(usize, S) -> (S, R),
        mut reverse: impl FnMut(usize, R, C) -> C,
    ) -> C {
        let mut ct = ct;
        let mut steps = Steps {
            advance: &mut advance,
            record: &mut record,
            reverse: &mut reverse,
            last: self.last.take(),
        };
        // Unwind the first descent: the segment above each stored state,
        // innermost first; level j of the descent had `snapshots − 1 − j`
        // free slots. The innermost segment starts with the last iteration,
        // whose residuals the forward sweep kept (so that every call of
        // each closure comes from one place, where it can be inlined).
        let mut end = self.n;
        while let Some(&(a, _)) = self.stack.last() {
            let free = self.snapshots - self.stack.len();
            ct = steps.segment(&mut self.stack, a, end, free, ct);
            self.stack.pop();
            end = a;
        }
        ct
    }
}

/// The three step closures of a reverse sweep, and the residuals of the
/// last iteration until they are used.
struct Steps<'a, A, Rec, Rev, R> {
    advance: &'a mut A,
    record: &'a mut Rec,
    reverse: &'a mut Rev,
    last: Option<R>,
}

impl<A, Rec, Rev, R> Steps<'_, A, Rec, Rev, R> {
    /// Reverses iterations `a..b`; the state before `a` is on top of
    /// `stack`, and `free` more slots may be used.
    fn segment<S: Clone, C>(
        &mut self,
        stack: &mut Vec<(usize, S)>,
        a: usize,
        b: usize,
        free: usize,
        mut ct: C,
    ) -> C
    where
        A: FnMut(usize, S) -> S,
        Rec: FnMut(usize, S) -> (S, R),
        Rev: FnMut(usize, R, C) -> C,
    {
        if b <= a {
            return ct;
        }
        let from = |stack: &Vec<(usize, S)>| stack.last().expect("state on the stack").1.clone();
        if b - a == 1 || free == 0 {
            // No slot to spare: re-advance from the stored state each time.
            for j in (a..b).rev() {
                let r = match self.last.take() {
                    Some(r) => r,
                    None => {
                        let mut s = from(stack);
                        for i in a..j {
                            s = (self.advance)(i, s);
                        }
                        (self.record)(j, s).1
                    }
                };
                ct = (self.reverse)(j, r, ct);
            }
            return ct;
        }
        let m = a + split(b - a, free + 1);
        let mut s = from(stack);
        for i in a..m {
            s = (self.advance)(i, s);
        }
        stack.push((m, s));
        ct = self.segment(stack, m, b, free - 1, ct);
        stack.pop();
        self.segment(stack, a, m, free, ct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    /// The minimum number of advances by exhaustive dynamic programming.
    fn brute(l: usize, s: usize, memo: &mut Vec<Vec<Option<usize>>>) -> usize {
        if l <= 1 {
            return 0;
        }
        if s == 1 {
            return l * (l - 1) / 2;
        }
        if let Some(t) = memo[l][s] {
            return t;
        }
        let t = (1..l)
            .map(|m| m + brute(l - m, s - 1, memo) + brute(m, s, memo))
            .min()
            .expect("l >= 2");
        memo[l][s] = Some(t);
        t
    }

    /// A loop state that counts how many states are alive at once.
    struct St(usize, Rc<(Cell<usize>, Cell<usize>)>);
    impl St {
        fn new(i: usize, c: &Rc<(Cell<usize>, Cell<usize>)>) -> St {
            c.0.set(c.0.get() + 1);
            c.1.set(c.1.get().max(c.0.get()));
            St(i, Rc::clone(c))
        }
    }
    impl Clone for St {
        fn clone(&self) -> Self {
            St::new(self.0, &self.1)
        }
    }
    impl Drop for St {
        fn drop(&mut self) {
            self.1.0.set(self.1.0.get() - 1);
        }
    }

    /// Runs the schedule on a counting loop (the state is the number of
    /// iterations so far) and checks that every iteration is reversed once,
    /// in reverse order, from the right state. Returns the number of
    /// advances and the most states alive at once.
    fn run(n: usize, s: usize) -> (usize, usize) {
        let (adv, rec) = (Cell::new(0), Cell::new(0));
        let counts = Rc::new((Cell::new(0), Cell::new(0)));
        let advance = |i: usize, st: St| {
            assert_eq!(st.0, i);
            adv.set(adv.get() + 1);
            St::new(i + 1, &st.1)
        };
        let record = |i: usize, st: St| {
            assert_eq!(st.0, i);
            rec.set(rec.get() + 1);
            (St::new(i + 1, &st.1), i)
        };
        let (out, tape) = Revolve::forward(n, s, St::new(0, &counts), advance, record);
        assert_eq!(out.0, n);
        drop(out);
        let mut expect = n;
        let ct = tape.reverse(n, advance, record, |i, r, ct: usize| {
            assert_eq!((i, r), (expect - 1, expect - 1));
            expect -= 1;
            ct - 1
        });
        assert_eq!((ct, expect), (0, 0));
        assert_eq!(rec.get(), n, "each iteration recorded once");
        assert_eq!(counts.0.get(), 0, "every state freed");
        (adv.get(), counts.1.get())
    }

    #[test]
    fn schedule_is_optimal_and_within_its_snapshots() {
        let mut memo = vec![vec![None; 9]; 80];
        for s in 1..9 {
            for n in 0..80 {
                let (adv, peak) = run(n, s);
                let best = brute(n, s, &mut memo);
                assert_eq!(min_forward_steps(n, s), best, "formula, n={n} s={s}");
                assert_eq!(adv, best, "schedule's advances, n={n} s={s}");
                // The snapshots, the working state and the next state
                // while a step runs.
                assert!(peak <= s + 2, "n={n} s={s}: {peak} states alive");
            }
        }
    }

    #[test]
    fn long_loops_follow_the_formula() {
        for (n, s) in [(10_000, 20), (1000, 3), (5000, 1000), (12_345, 7)] {
            let (adv, peak) = run(n, s);
            assert_eq!(adv, min_forward_steps(n, s), "n={n} s={s}");
            assert!(peak <= s + 2);
        }
        // Hand-checked: r = 4 since C(24, 20) = 10626 >= 10000 > C(23, 20);
        // 4·10000 − C(24, 21) = 40000 − 2024.
        assert_eq!(min_forward_steps(10_000, 20), 40_000 - 2024);
    }
}
