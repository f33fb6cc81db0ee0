//! `kmeans`: `cost = Σᵢ minⱼ ‖pᵢ − cⱼ‖²` and `dir = J ⊘ diag(H)`, the
//! gradient in the centroids over the Hessian's diagonal. The Hessian is
//! diagonal (each centroid's term is a sum of squares of its own
//! coordinates), so its diagonal is the Hessian-vector product with ones:
//! forward over reverse, `jvp(grad(cost))`.

use super::{Job, field, matrix, rows, unknown};
use nabla::prelude::*;
use serde_json::Value as Json;

/// `Σᵢ minⱼ ‖pᵢ − cⱼ‖²` with `‖pᵢ − cⱼ‖² = ‖pᵢ‖² + (‖cⱼ‖² − 2 pᵢ·cⱼ)`: the
/// cross terms are one matrix product `[n, d] × [d, k]`, and `‖pᵢ‖²`
/// (the same for every `j`) is added after the minimum.
#[differentiable]
fn cost(c: &Array, p: &Array) -> Array {
    let cc = c.square().sum_axes(&[1], false).expand_dims(0);
    let cross = p.matmul(&c.permute(&[1, 0]));
    let nearest = (cc - cross * 2.0).min_axes(&[1], false);
    nabla::sum(&nearest) + nabla::sum(&p.square())
}

struct Kmeans {
    p: Array,
    c: Array,
    dir: bool,
    out: Option<Array>,
}

impl Job for Kmeans {
    fn run(&mut self) {
        self.out = Some(if self.dir {
            let ones = self.c.ones_like();
            let zeros = self.p.zeros_like();
            let (j, h) = jvp(grad(cost))((&self.c, &self.p), (&ones, &zeros));
            j / h
        } else {
            cost(&self.c, &self.p)
        });
    }
    fn output(&self) -> Json {
        let out = self.out.as_ref().expect("run first");
        if self.dir {
            rows(out)
        } else {
            Json::from(out.item())
        }
    }
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let dir = match function {
        "cost" => false,
        "dir" => true,
        f => return Err(unknown("kmeans", f)),
    };
    let p = matrix(field(input, "points")?, "points")?;
    let c = matrix(field(input, "centroids")?, "centroids")?;
    if p.shape()[1] != c.shape()[1] {
        return Err(format!(
            "kmeans: points {:?} and centroids {:?} differ in dimension",
            p.shape(),
            c.shape()
        ));
    }
    Ok(Box::new(Kmeans {
        p,
        c,
        dir,
        out: None,
    }))
}
