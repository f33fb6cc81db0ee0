use nabla::prelude::*;

// No rules at all.
#[nabla::custom_op(batch = elementwise)]
fn no_rules(x: &Array) -> Array {
    x.exp()
}

// No array to be the forward's input: only static parameters.
#[nabla::custom_op(vjp = only_vjp)]
fn no_arrays(k: f64) -> Array {
    Array::scalar(k)
}

fn only_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
    ct.mul(&x.exp())
}

// The VJP rule returns one cotangent for a two-input op.
#[nabla::custom_op(jvp = two_jvp, vjp = one_cotangent)]
fn two_inputs(a: &Array, b: &Array) -> Array {
    a * b
}

fn two_jvp<V: ArrayValue>(a: &V, b: &V, _y: &V, _da: Option<&V>, _db: Option<&V>) -> V {
    a.mul(b)
}

fn one_cotangent<V: ArrayValue>(_a: &V, b: &V, _y: &V, ct: &V) -> V {
    ct.mul(b)
}

fn main() {}
