//! The evals this tool answers, one file each, and the JSON helpers they
//! share. Each eval turns an `evaluate` message's input into a [`Job`]:
//! parsing happens once, [`Job::run`] is the timed computation, and
//! [`Job::output`] converts the last run's result to JSON.

mod ba;
mod det;
mod gmm;
mod hello;
mod ht;
mod kmeans;
mod llsq;
mod lse;
mod lstm;
mod nested;
mod ode;
mod particle;
mod saddle;

use nabla::prelude::*;
use serde_json::Value as Json;

/// The modules `define` accepts.
pub const MODULES: &[&str] = &[
    "hello", "lse", "gmm", "ba", "ode", "llsq", "det", "kmeans", "ht", "lstm", "particle", "saddle",
];

/// One evaluation: run it (timed, repeatedly), then read its output.
pub trait Job {
    /// The computation GradBench times.
    fn run(&mut self);
    /// The last run's result.
    fn output(&self) -> Json;
}

/// The job for `module.function` on `input`, or why there is none.
pub fn job(module: &str, function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    match module {
        "hello" => hello::job(function, input),
        "lse" => lse::job(function, input),
        "gmm" => gmm::job(function, input),
        "ode" => ode::job(function, input),
        "llsq" => llsq::job(function, input),
        "det" => det::job(function, input),
        "ba" => ba::job(function, input),
        "kmeans" => kmeans::job(function, input),
        "ht" => ht::job(function, input),
        "lstm" => lstm::job(function, input),
        "particle" => particle::job(function, input),
        "saddle" => saddle::job(function, input),
        _ => Err(format!("unknown module {module:?}")),
    }
}

/// A job computing one array with `compute` each run: a scalar value
/// (reported as a number) or a vector (reported as a list).
struct Computed<F: FnMut() -> Array> {
    compute: F,
    vector: bool,
    out: Option<Array>,
}

impl<F: FnMut() -> Array> Job for Computed<F> {
    fn run(&mut self) {
        self.out = Some((self.compute)());
    }
    fn output(&self) -> Json {
        let out = self.out.as_ref().expect("run first");
        if self.vector {
            list(out)
        } else {
            Json::from(out.item())
        }
    }
}

/// The job of a module whose two functions are a scalar function
/// (`names.0`, by `value`) and its gradient (`names.1`, by `gradient`).
fn value_or_gradient(
    module: &str,
    function: &str,
    names: (&str, &str),
    value: impl FnMut() -> Array + 'static,
    gradient: impl FnMut() -> Array + 'static,
) -> Result<Box<dyn Job>, String> {
    if function == names.0 {
        Ok(Box::new(Computed {
            compute: value,
            vector: false,
            out: None,
        }))
    } else if function == names.1 {
        Ok(Box::new(Computed {
            compute: gradient,
            vector: true,
            out: None,
        }))
    } else {
        Err(unknown(module, function))
    }
}

/// An unknown function of a module.
fn unknown(module: &str, function: &str) -> String {
    format!("{module}: unknown function {function:?}")
}

/// `input[key]`, or an error naming it.
fn field<'a>(input: &'a Json, key: &str) -> Result<&'a Json, String> {
    input
        .get(key)
        .ok_or_else(|| format!("input has no {key:?}"))
}

/// A number.
fn num(j: &Json, what: &str) -> Result<f64, String> {
    j.as_f64()
        .ok_or_else(|| format!("{what}: expected a number, got {j}"))
}

/// A non-negative integer.
fn int(j: &Json, what: &str) -> Result<usize, String> {
    j.as_u64()
        .map(|v| v as usize)
        .or_else(|| {
            j.as_f64()
                .filter(|v| v.fract() == 0.0 && *v >= 0.0)
                .map(|v| v as usize)
        })
        .ok_or_else(|| format!("{what}: expected a non-negative integer, got {j}"))
}

/// A list of numbers.
fn nums(j: &Json, what: &str) -> Result<Vec<f64>, String> {
    j.as_array()
        .ok_or_else(|| format!("{what}: expected a list of numbers"))?
        .iter()
        .map(|v| num(v, what))
        .collect()
}

/// A list of equal-length lists of numbers, as an f64 array `[rows, cols]`
/// (`cols` given for lists that may be empty).
fn matrix(j: &Json, what: &str) -> Result<Array, String> {
    let rows = j
        .as_array()
        .ok_or_else(|| format!("{what}: expected a list of lists"))?;
    let mut flat = Vec::new();
    let mut cols = None;
    for r in rows {
        let v = nums(r, what)?;
        if *cols.get_or_insert(v.len()) != v.len() {
            return Err(format!("{what}: rows of different lengths"));
        }
        flat.extend(v);
    }
    Ok(Array::from_vec(flat, &[rows.len(), cols.unwrap_or(0)]))
}

/// A vector as a JSON list.
fn list(a: &Array) -> Json {
    Json::from(a.to_vec::<f64>())
}

/// A `[rows, cols]` array as a JSON list of lists.
fn rows(a: &Array) -> Json {
    let cols = a.shape()[a.ndim() - 1].max(1);
    Json::from(
        a.to_vec::<f64>()
            .chunks(cols)
            .map(|r| Json::from(r.to_vec()))
            .collect::<Vec<_>>(),
    )
}
