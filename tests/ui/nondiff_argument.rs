use nabla::prelude::*;

#[derive(Clone, Tree)]
struct Embedding {
    table: Array,
}

impl Embedding {
    #[differentiable]
    fn forward(&self, #[nondiff] idx: &Array) -> Array {
        &self.table * idx
    }
}

#[differentiable]
fn scaled(x: &Array, #[nondiff] mask: &Array) -> Array {
    x * mask
}

// `idx` and `mask` are differentiable here (not marked #[nondiff]) but
// static in the called method and function: the error is at the argument
// and says which parameter to mark.
#[differentiable]
fn loss(model: &Embedding, idx: &Array, mask: &Array) -> Array {
    nabla::sum(&model.forward(idx)) + nabla::sum(&scaled(&model.table, mask))
}

fn main() {
    let m = Embedding { table: Array::ones(&[2], DType::F64) };
    let idx = Array::ones(&[2], DType::F64);
    let _ = nabla::grad(loss)(&m, &idx, &idx);
}
