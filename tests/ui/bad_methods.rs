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
fn if_let_with_another_pattern(x: &Array, k: usize) -> Array {
    if let 3 = k { x * 3.0 } else { x.clone() }
}

fn main() {}
