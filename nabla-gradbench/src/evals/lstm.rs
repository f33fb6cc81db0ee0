//! `lstm`: the negative log-likelihood per symbol of a character sequence
//! under a stacked LSTM with diagonal weights (`objective`) and its
//! gradient in the weights and biases (`jacobian`, `main_params` then
//! `extra_params`, each row-major).

use super::{Job, field, list, matrix, unknown};
use nabla::prelude::*;
use serde_json::Value as Json;

/// Row `i` of a matrix, as a vector.
#[differentiable]
fn row(m: &Array, #[nondiff] i: usize) -> Array {
    m.slice_axis(0, i..i + 1).squeeze(0)
}

/// `start, start + 2, …`, `l` of them: the hidden (0) or cell (1) rows of
/// the state.
fn every_other(l: usize, start: usize) -> Vec<usize> {
    (0..l).map(|i| 2 * i + start).collect()
}

/// The objective: `main [2l, 4b]` (layer `i`'s weights in row `2i`, biases
/// in row `2i + 1`, gates in blocks forget | input | output | change),
/// `extra [3, b]` (input weight, output weight, output bias), the initial
/// state `[2l, b]` (hidden in row `2i`, cell in row `2i + 1`) and the
/// sequence `[c, b]` of 0/1 bits. The sequence is data (`#[nondiff]`).
#[differentiable]
fn objective(main: &Array, extra: &Array, state: &Array, #[nondiff] seq: &Array) -> Array {
    let (l, b, c) = (main.shape()[0] / 2, main.shape()[1] / 4, seq.shape()[0]);
    let (in_w, out_w, out_b) = (row(extra, 0), row(extra, 1), row(extra, 2));
    let mut hs = state.index_select(0, &every_other(l, 0));
    let mut cs = state.index_select(0, &every_other(l, 1));
    let mut total = nabla::sum(&(&in_w * 0.0));
    for t in 0..c - 1 {
        let mut inp = row(seq, t) * &in_w;
        let mut hs_next = hs.slice_axis(0, 0..0);
        let mut cs_next = cs.slice_axis(0, 0..0);
        for i in 0..l {
            let (w, bias) = (row(main, 2 * i), row(main, 2 * i + 1));
            let (h, cell) = (row(&hs, i), row(&cs, i));
            // All four gates' pre-activations at once: the forget and
            // output gates read the input, the input gate and the change
            // the hidden state.
            let pre = nabla::concat(&[&inp, &h, &inp, &h], 0) * &w + &bias;
            let sig = pre.slice_axis(0, 0..3 * b).sigmoid();
            let change = pre.slice_axis(0, 3 * b..4 * b).tanh();
            let cell = cell * sig.slice_axis(0, 0..b) + sig.slice_axis(0, b..2 * b) * change;
            let h = sig.slice_axis(0, 2 * b..3 * b) * cell.tanh();
            hs_next = nabla::concat(&[hs_next, h.expand_dims(0)], 0);
            cs_next = nabla::concat(&[cs_next, cell.expand_dims(0)], 0);
            inp = h;
        }
        hs = hs_next;
        cs = cs_next;
        let ypred = inp * &out_w + &out_b;
        let lse = (nabla::sum(&ypred.exp()) + 2.0).ln();
        total += nabla::sum(&(row(seq, t + 1) * (ypred - lse)));
    }
    total * (-1.0 / ((c - 1) * b) as f64)
}

struct Lstm {
    main: Array,
    extra: Array,
    state: Array,
    seq: Array,
    jacobian: bool,
    out: Option<Array>,
}

impl Job for Lstm {
    fn run(&mut self) {
        self.out = Some(if self.jacobian {
            let (gm, ge) =
                grad!(objective, argnums = (0, 1))(&self.main, &self.extra, &self.state, &self.seq);
            nabla::concat(&[gm.reshape(&[gm.numel()]), ge.reshape(&[ge.numel()])], 0)
        } else {
            objective(&self.main, &self.extra, &self.state, &self.seq)
        });
    }
    fn output(&self) -> Json {
        let out = self.out.as_ref().expect("run first");
        if self.jacobian {
            list(out)
        } else {
            Json::from(out.item())
        }
    }
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let jacobian = match function {
        "objective" => false,
        "jacobian" => true,
        f => return Err(unknown("lstm", f)),
    };
    let main = matrix(field(input, "main_params")?, "main_params")?;
    let extra = matrix(field(input, "extra_params")?, "extra_params")?;
    let state = matrix(field(input, "state")?, "state")?;
    let seq = matrix(field(input, "sequence")?, "sequence")?;
    let (l2, b4) = (main.shape()[0], main.shape()[1]);
    let b = extra.shape()[1];
    if l2 == 0
        || l2 % 2 != 0
        || b4 != 4 * b
        || extra.shape()[0] != 3
        || state.shape() != [l2, b]
        || seq.shape()[1] != b
        || seq.shape()[0] < 2
    {
        return Err(format!(
            "lstm: shapes main_params {:?}, extra_params {:?}, state {:?}, sequence {:?} do not fit \
             ([2l, 4b], [3, b], [2l, b], [c ≥ 2, b])",
            main.shape(),
            extra.shape(),
            state.shape(),
            seq.shape()
        ));
    }
    Ok(Box::new(Lstm {
        main,
        extra,
        state,
        seq,
        jacobian,
        out: None,
    }))
}
