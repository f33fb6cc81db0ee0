//! One message in, one reply out: `start`, `define`, `evaluate` (timed
//! runs under `min_runs` / `min_seconds`) and anything else (answered with
//! its id). A message that cannot be understood, or an evaluation that
//! fails (bad input, a panic), gets `success: false` with an error, and the
//! tool keeps serving.

use crate::evals;
use serde_json::{Value as Json, json};
use std::time::{Duration, Instant};

/// The reply to one line of input.
pub fn respond(line: &str) -> Json {
    let msg: Json = match serde_json::from_str(line) {
        Ok(m) => m,
        Err(e) => {
            return json!({"id": Json::Null, "success": false, "error": format!("not JSON: {e}")});
        }
    };
    let id = msg.get("id").cloned().unwrap_or(Json::Null);
    match msg.get("kind").and_then(Json::as_str) {
        Some("start") => json!({"id": id, "tool": "nabla"}),
        Some("define") => {
            let module = msg.get("module").and_then(Json::as_str).unwrap_or("");
            if evals::MODULES.contains(&module) {
                json!({"id": id, "success": true})
            } else {
                json!({"id": id, "success": false, "error": format!("unknown module {module:?}; this tool has {:?}", evals::MODULES)})
            }
        }
        Some("evaluate") => match evaluate(&msg) {
            Ok((output, timings)) => {
                let timings: Vec<Json> = timings
                    .iter()
                    .map(|t| json!({"name": "evaluate", "nanoseconds": t.as_nanos() as u64}))
                    .collect();
                json!({"id": id, "success": true, "output": output, "timings": timings})
            }
            Err(e) => json!({"id": id, "success": false, "error": e}),
        },
        _ => json!({"id": id}),
    }
}

/// Runs the function `min_runs` times and until `min_seconds` have
/// passed (once for inputs without them, as `hello`'s), timing only the
/// computation; the output is the last run's.
fn evaluate(msg: &Json) -> Result<(Json, Vec<Duration>), String> {
    let module = msg
        .get("module")
        .and_then(Json::as_str)
        .ok_or("evaluate: no module")?;
    let function = msg
        .get("function")
        .and_then(Json::as_str)
        .ok_or("evaluate: no function")?;
    let input = msg.get("input").ok_or("evaluate: no input")?;
    let min_runs = input
        .get("min_runs")
        .and_then(Json::as_f64)
        .unwrap_or(1.0)
        .max(1.0) as usize;
    let min_seconds = input
        .get("min_seconds")
        .and_then(Json::as_f64)
        .unwrap_or(0.0);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut job = evals::job(module, function, input)?;
        let mut timings = Vec::new();
        let start = Instant::now();
        while timings.len() < min_runs || start.elapsed().as_secs_f64() < min_seconds {
            let t = Instant::now();
            job.run();
            timings.push(t.elapsed());
        }
        let out = job.output();
        if let Some(bad) = non_finite(&out) {
            return Err(format!(
                "{module}.{function}: the output has a non-finite number ({bad})"
            ));
        }
        Ok((out, timings))
    }));
    caught.unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into());
        Err(format!("{module}.{function} failed: {why}"))
    })
}

/// A number JSON cannot carry (serde_json writes it as `null`).
fn non_finite(j: &Json) -> Option<String> {
    match j {
        Json::Null => Some("null".into()),
        Json::Array(v) => v.iter().find_map(non_finite),
        Json::Object(m) => m.values().find_map(non_finite),
        _ => None,
    }
}
