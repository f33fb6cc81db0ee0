use nabla::prelude::*;

#[derive(Clone, Tree)]
struct Layer {
    w: Array,
}

impl Layer {
    #[differentiable]
    fn mutate(&mut self, x: &Array) -> Array {
        x * &self.w
    }

    #[differentiable]
    fn owned(self, x: &Array) -> Array {
        x * &self.w
    }
}

#[differentiable]
fn if_let_on_a_static(x: &Array, k: Option<usize>) -> Array {
    if let Some(v) = k { x * (v as f64) } else { x.clone() }
}

fn main() {}
