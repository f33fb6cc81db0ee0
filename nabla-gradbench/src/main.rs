//! `nabla-gradbench`: a GradBench tool. It reads one JSON message per line
//! on stdin and answers each with one line on stdout, until stdin ends
//! (the protocol: GradBench's `CONTRIBUTING.md`, summarised in
//! `docs/gradbench.md`). Every eval's functions are written with Nabla as
//! a user would write them, in `evals/`.

mod evals;
mod protocol;

use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let reply = protocol::respond(&line);
        if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}
