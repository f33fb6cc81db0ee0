//! Bad input everywhere (issue 46): every public op is called with drawn
//! shapes, dtypes, axes, parameters and values — empty arrays, 0-d
//! arrays, rank 8, NaN and ±inf, transposed, sliced and broadcast views,
//! mismatched shapes, wrong dtypes, out-of-range axes and shapes whose
//! element count overflows `usize` — and each call must either return or
//! panic with a message that names the op and says what to do.
//!
//! - [`registry`]: every op of `nabla_ops`' lists (unary and binary from
//!   the lists themselves; the other primitives by name, and the test
//!   fails when the list gains an op it does not call);
//! - [`library`]: composites, `nn` layers, `linalg`, constructors and
//!   shapes too large for memory;
//! - [`empty`]: NumPy's rules for empty arrays;
//! - [`io_fuzz`]: truncated and corrupted safetensors files.
//!
//! Each call runs on a thread of its own with a time limit ([`Cases`]),
//! so a hang fails the test instead of stalling it, and its panic, if
//! any, is checked by [`well_formed`].

mod draw;
mod empty;
mod io_fuzz;
mod library;
mod registry;

use std::sync::mpsc;
use std::time::Duration;

/// How long one call may take (debug build, arrays of at most a few
/// hundred elements) before it counts as a hang, times [`time_scale`].
const LIMIT: Duration = Duration::from_secs(20);

/// The factor `NABLA_TEST_TIME_SCALE` (a positive whole number; 1 when
/// unset) stretches [`LIMIT`] by: `scripts/valgrind.sh` sets it, since
/// every call runs some 50 times slower under Valgrind.
///
/// # Panics
/// When the variable is set to anything but a positive whole number.
fn time_scale() -> u32 {
    match std::env::var("NABLA_TEST_TIME_SCALE") {
        Err(_) => 1,
        Ok(v) => v.parse().ok().filter(|&s: &u32| s > 0).unwrap_or_else(|| {
            panic!("NABLA_TEST_TIME_SCALE is {v:?}; set it to a positive whole number such as 50")
        }),
    }
}

/// The message of a panic payload.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else {
        "<a panic without a message>".into()
    }
}

/// Words of panics that come from inside the library (a bug), never from
/// a check of the input.
const INTERNAL: [&str; 9] = [
    "index out of bounds",
    "overflow",
    "unwrap()",
    "internal error",
    "ndarray:",
    "ShapeError",
    "assertion",
    "this is a bug",
    "expected one array",
];

/// Whether `msg` is a proper rejection by the op known as any of `names`:
/// it names the op, carries the runtime's fix clause (`"op: what is
/// wrong; what to do"`: every check's message has the `; ` before its
/// fix) and is no internal failure (overflow, index out of bounds,
/// `unwrap`, ndarray's own panics).
pub fn well_formed(names: &[&str], msg: &str) -> Result<(), String> {
    if !names.iter().any(|n| msg.contains(n)) {
        return Err(format!("the panic does not name the op ({names:?}): {msg}"));
    }
    if !msg.contains("; ") {
        return Err(format!("the panic says no fix (no `; what to do`): {msg}"));
    }
    if let Some(w) = INTERNAL.iter().find(|w| msg.contains(*w)) {
        return Err(format!("an internal failure ({w}): {msg}"));
    }
    Ok(())
}

/// The name of the threads that run cases.
const CASE_THREAD: &str = "bad_input case";

/// Installs (once) a panic hook that prints nothing for the panics of
/// case threads (thousands, each expected, and slow to print with
/// `RUST_BACKTRACE` set) and hands every other panic to the hook before.
fn quiet_case_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some(CASE_THREAD) {
                before(info);
            }
        }));
    });
}

/// The calls of one test and the failures found: every call is recorded,
/// and the test asserts at the end so that one run lists every failure.
pub struct Cases {
    name: &'static str,
    failures: Vec<String>,
    calls: usize,
}

impl Cases {
    pub fn new(name: &'static str) -> Cases {
        Cases {
            name,
            failures: Vec::new(),
            calls: 0,
        }
    }

    /// Runs `f` on a thread of its own, within [`LIMIT`] (times
    /// [`time_scale`]): `Ok` with its
    /// value, or `Err` with the panic's message. A hang is recorded as a
    /// failure (and gives `Err`).
    pub fn call<T: Send + 'static>(
        &mut self,
        what: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        self.calls += 1;
        quiet_case_panics();
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(CASE_THREAD.into())
            .spawn(move || {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
                    .map_err(|p| panic_message(&*p));
                let _ = tx.send(r);
            })
            .expect("a thread for the case");
        let limit = LIMIT * time_scale();
        match rx.recv_timeout(limit) {
            Ok(r) => r,
            Err(_) => {
                self.fail(format!("{what}: no answer within {limit:?} (a hang)"));
                Err("hang".into())
            }
        }
    }

    /// [`call`](Self::call), where a panic must be [`well_formed`] for
    /// `names`; gives the value if the call returned.
    pub fn expect_ok_or_rejected<T: Send + 'static>(
        &mut self,
        names: &[&str],
        what: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        match self.call(what, f) {
            Ok(v) => Some(v),
            Err(m) if m == "hang" => None,
            Err(m) => {
                if let Err(e) = well_formed(names, &m) {
                    self.fail(format!("{what}: {e}"));
                }
                None
            }
        }
    }

    /// [`call`](Self::call), where the call must be rejected with a
    /// [`well_formed`] panic.
    pub fn expect_rejected<T: Send + 'static>(
        &mut self,
        names: &[&str],
        what: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) {
        match self.call(what, f) {
            Ok(_) => self.fail(format!("{what}: accepted, but should be rejected")),
            Err(m) if m == "hang" => {}
            Err(m) => {
                if let Err(e) = well_formed(names, &m) {
                    self.fail(format!("{what}: {e}"));
                }
            }
        }
    }

    /// [`call`](Self::call), where the call must return.
    pub fn expect_ok<T: Send + 'static>(
        &mut self,
        what: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        match self.call(what, f) {
            Ok(v) => Some(v),
            Err(m) if m == "hang" => None,
            Err(m) => {
                self.fail(format!("{what}: valid input rejected: {m}"));
                None
            }
        }
    }

    /// Records a failure.
    pub fn fail(&mut self, f: String) {
        self.failures.push(f);
    }

    /// Panics listing the failures (at most three per op), if there are
    /// any.
    pub fn finish(self) {
        assert!(self.calls > 0, "{}: no calls", self.name);
        if !self.failures.is_empty() {
            let n = self.failures.len();
            let mut per_op = std::collections::HashMap::new();
            let shown: Vec<&str> = self
                .failures
                .iter()
                .filter(|f| {
                    let op = f.split('(').next().unwrap_or_default();
                    let k = per_op.entry(op).or_insert(0);
                    *k += 1;
                    *k <= 3
                })
                .map(|s| s.as_str())
                .collect();
            panic!(
                "{}: {n} of {} calls failed (at most three shown per op):\n{}",
                self.name,
                self.calls,
                shown.join("\n")
            );
        }
    }
}

#[test]
fn well_formed_accepts_the_runtime_style_only() {
    let ok = "sum: axis 2 is out of range for an array with 2 dimensions; use an axis in -2..2";
    assert!(well_formed(&["sum"], ok).is_ok());
    assert!(well_formed(&["max"], ok).is_err(), "another op's name");
    assert!(well_formed(&["concat"], "concat: needs at least one array").is_err());
    let oob = "index out of bounds: the len is 3 but the index is 3; sum";
    assert!(well_formed(&["sum"], oob).is_err());
}
