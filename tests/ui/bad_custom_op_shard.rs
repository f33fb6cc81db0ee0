use nabla::prelude::*;

// `shard` takes `last(k)`, the number of trailing axes that must be whole.
#[nabla::custom_op(jvp = rows_jvp, shard = rows)]
fn row_sums(x: &Array) -> Array {
    x.sum_axes(&[-1], true)
}

fn rows_jvp<V: ArrayValue>(_x: &V, y: &V, _dx: Option<&V>) -> V {
    y.zeros_like()
}

fn main() {}
