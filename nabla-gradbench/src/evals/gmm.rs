//! `gmm`: the log posterior of a Gaussian mixture with a Wishart prior on
//! the precisions (`objective`) and its gradient in all parameters
//! (`jacobian`). Precision factors `Q_k` are lower triangular: diagonal
//! `exp(q_k)`, strict lower part `l_k` filled column by column.

use super::{Job, field, int, matrix, num, rows, unknown};
use nabla::prelude::*;
use serde_json::{Value as Json, json};

/// The parameters GradBench differentiates in.
#[derive(Clone, Tree)]
struct Params {
    alpha: Array,
    mu: Array,
    q: Array,
    l: Array,
}

/// Per-position index into `[l_k, 0]`: the strict lower triangle column
/// by column, zero elsewhere.
fn lower_fill(d: usize) -> Vec<usize> {
    let t = d * (d - 1) / 2;
    let mut fill = vec![t; d * d];
    let mut i = 0;
    for c in 0..d {
        for r in c + 1..d {
            fill[r * d + c] = i;
            i += 1;
        }
    }
    fill
}

/// One zero appended to each row of a matrix (as `pad`'s widths).
fn one_more_column() -> Vec<(usize, usize)> {
    vec![(0, 0), (0, 1)]
}

/// `ln Γ_d(a)`, the multivariate log-gamma function.
fn log_gamma_d(d: usize, a: f64) -> f64 {
    let terms = Array::from_vec((1..=d).map(|j| a + (1.0 - j as f64) / 2.0).collect(), &[d]);
    (d * (d - 1)) as f64 / 4.0 * std::f64::consts::PI.ln() + nabla::sum(&terms.lgamma()).item()
}

/// The log posterior without its constant (`k · C`), for data `x [n, d]`
/// and the `d × d` identity `eye`.
#[differentiable]
fn objective(
    p: &Params,
    x: &Array,
    eye: &Array,
    #[nondiff] m: f64,
    #[nondiff] gamma: f64,
) -> Array {
    let (n, d) = (x.shape()[0], x.shape()[1]);
    let k = p.alpha.shape()[0];
    // Q_k = diag(exp q_k) + strict lower part from l_k: [k, d, d].
    let fill = lower_fill(d);
    let lower = nabla::pad(&p.l, &one_more_column(), 0.0)
        .index_select(1, &fill)
        .reshape(&[k, d, d]);
    let qf = p.q.exp().expand_dims(1) * eye + lower;
    // z = Q_k (x_i − μ_k) as Q_k x_i − Q_k μ_k: [k, n, d].
    let qt = qf.permute(&[0, 2, 1]);
    let qx = x.matmul(&qt);
    let qmu = p.mu.expand_dims(1).matmul(&qt);
    let z = qx - qmu;
    let sum_q = nabla::sum_axes(&p.q, &[1], false);
    let beta = (&p.alpha + &sum_q).expand_dims(1) - nabla::sum_axes(&z.square(), &[2], false) * 0.5;
    let half_log_2pi = 0.5 * (2.0 * std::f64::consts::PI).ln();
    let loglik = nabla::sum(&nabla::logsumexp_axes(&beta, &[0], false))
        - nabla::logsumexp(&p.alpha) * n as f64
        - (n * d) as f64 * half_log_2pi;
    let frob = nabla::sum(&(&p.q * 2.0).exp()) + nabla::sum(&p.l.square());
    let prior = frob * (-0.5 * gamma * gamma) + nabla::sum(&sum_q) * m;
    loglik + prior
}

struct Gmm {
    params: Params,
    x: Array,
    eye: Array,
    m: f64,
    gamma: f64,
    constant: f64,
    jacobian: bool,
    value: f64,
    grads: Option<Params>,
}

impl Job for Gmm {
    fn run(&mut self) {
        if self.jacobian {
            self.grads = Some(grad(objective)(
                &self.params,
                &self.x,
                &self.eye,
                self.m,
                self.gamma,
            ));
        } else {
            let v = objective(&self.params, &self.x, &self.eye, self.m, self.gamma);
            self.value = v.item() + self.constant;
        }
    }
    fn output(&self) -> Json {
        match &self.grads {
            Some(g) if self.jacobian => json!({
                "alpha": Json::from(g.alpha.to_vec::<f64>()),
                "mu": rows(&g.mu),
                "q": rows(&g.q),
                "l": rows(&g.l),
            }),
            _ => Json::from(self.value),
        }
    }
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let jacobian = match function {
        "objective" => false,
        "jacobian" => true,
        f => return Err(unknown("gmm", f)),
    };
    let d = int(field(input, "d")?, "d")?;
    let k = int(field(input, "k")?, "k")?;
    let m = num(field(input, "m")?, "m")?;
    let gamma = num(field(input, "gamma")?, "gamma")?;
    let x = matrix(field(input, "x")?, "x")?;
    let alpha = Array::from_vec(super::nums(field(input, "alpha")?, "alpha")?, &[k]);
    let mu = matrix(field(input, "mu")?, "mu")?;
    let q = matrix(field(input, "q")?, "q")?;
    let mut l = matrix(field(input, "l")?, "l")?;
    if d == 1 {
        l = Array::zeros(&[k, 0], DType::F64);
    }
    for (name, a, want) in [
        ("x", &x, d),
        ("mu", &mu, d),
        ("q", &q, d),
        ("l", &l, d * (d - 1) / 2),
    ] {
        if a.shape()[1] != want {
            return Err(format!(
                "gmm: {name} has rows of {} numbers, d = {d} needs {want}",
                a.shape()[1]
            ));
        }
    }
    // The prior's normalising constant does not depend on the parameters.
    let nw = d as f64 + m + 1.0;
    let c = nw * d as f64 * (gamma.ln() - 0.5 * 2f64.ln()) - log_gamma_d(d, nw / 2.0);
    Ok(Box::new(Gmm {
        params: Params { alpha, mu, q, l },
        x,
        eye: Array::eye(d, DType::F64),
        m,
        gamma,
        constant: k as f64 * c,
        jacobian,
        value: 0.0,
        grads: None,
    }))
}
