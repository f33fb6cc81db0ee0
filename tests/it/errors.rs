//! Bad input is a panic whose message names the op, the shapes and the fix.
//! These tests pin the messages (exact strings) and the panic's location
//! (the caller's file).

use nabla::prelude::*;

fn f32s(shape: &[usize]) -> Array {
    Array::ones(shape, DType::F32)
}

fn message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let err = std::panic::catch_unwind(f).expect_err("expected a panic");
    match err.downcast::<String>() {
        Ok(s) => *s,
        Err(e) => e
            .downcast::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}

#[test]
fn every_binary_op_names_itself_and_the_shapes() {
    type Op = fn(&Array, &Array) -> Array;
    let ops: [(&str, Op); 8] = [
        ("add", |a, b| a + b),
        ("sub", |a, b| a - b),
        ("mul", |a, b| a * b),
        ("div", |a, b| a / b),
        ("pow", |a, b| a.pow(b)),
        ("maximum", |a, b| a.maximum(b)),
        ("minimum", |a, b| a.minimum(b)),
        ("atan2", |a, b| a.atan2(b)),
    ];
    for (name, op) in ops {
        let msg = message(move || {
            op(&f32s(&[2, 3]), &f32s(&[4]));
        });
        assert_eq!(
            msg,
            format!(
                "{name}: shapes [2, 3] and [4] do not broadcast; trailing dimensions must be equal or 1 \
                 (reshape or expand_dims one operand)"
            )
        );
    }
}

#[test]
fn matmul_inner_dimensions() {
    let msg = message(|| {
        f32s(&[2, 3]).matmul(&f32s(&[4, 5]));
    });
    assert_eq!(
        msg,
        "matmul: inner dimensions differ, [2, 3] @ [4, 5] (3 vs 4); the last axis of the left operand must equal \
         the second-to-last of the right (transpose one operand?)"
    );
}

#[test]
fn bad_axis() {
    let msg = message(|| {
        f32s(&[2, 3]).sum_axes(&[2], false);
    });
    assert_eq!(
        msg,
        "sum: axis 2 is out of range for an array with 2 dimensions; use an axis in -2..2"
    );
    let msg = message(|| {
        f32s(&[2, 3]).softmax(-3);
    });
    assert!(msg.starts_with("softmax: axis -3 is out of range"), "{msg}");
}

#[test]
fn reshape_size() {
    let msg = message(|| {
        f32s(&[2, 3]).reshape(&[4, 2]);
    });
    assert_eq!(
        msg,
        "reshape: cannot reshape [2, 3] (6 elements) into [4, 2] (8 elements); the element counts must match"
    );
}

#[test]
fn permute_lists_each_axis_once() {
    let x = f32s(&[2, 3, 4]);
    // A repeat, a missing axis, an axis out of range, a wrong length.
    for perm in [&[0, 0, 1][..], &[2, 0, 0], &[0, 1, 3], &[1, 0]] {
        let msg = message(|| {
            x.permute(perm);
        });
        assert_eq!(
            msg,
            format!(
                "permute: {perm:?} is not a permutation of the 3 axes of an array with shape [2, 3, 4]; list each \
                 axis 0..3 once"
            )
        );
    }
    assert_eq!(x.permute(&[2, 0, 1]).shape(), &[4, 2, 3]);
}

#[test]
fn f32_f64_mix_asks_for_a_cast() {
    let msg = message(|| {
        let _ = f32s(&[2]) + Array::ones(&[2], DType::F64);
    });
    assert_eq!(
        msg,
        "add: dtype mismatch, f32 [2] and f64 [2]; Nabla never promotes implicitly: convert one side with \
         .cast(DType::F32)"
    );
}

#[test]
fn item_on_many_elements() {
    let msg = message(|| {
        f32s(&[2, 2]).item();
    });
    assert_eq!(
        msg,
        "item: the array has shape [2, 2] (4 elements) but item() needs exactly one; index or reduce it first (e.g. .sum())"
    );
}

#[test]
fn backward_on_non_scalar() {
    let msg = message(|| {
        let w = f32s(&[3]).requires_grad();
        (&w * 2.0).backward();
    });
    assert_eq!(
        msg,
        "backward: the output has shape [3] but backward() needs a scalar (one element); reduce it first, e.g. \
         loss.sum() or loss.mean()"
    );
}

#[test]
fn grad_without_backward() {
    let msg = message(|| {
        f32s(&[3]).requires_grad().grad();
    });
    assert!(
        msg.starts_with("grad(): this array has no gradient yet"),
        "{msg}"
    );
}

#[test]
fn integer_arithmetic_asks_for_a_cast() {
    let msg = message(|| {
        Array::arange(3, DType::I64).exp();
    });
    assert_eq!(
        msg,
        "exp: expected an f32 or f64 array, got i64 with shape [3]; convert it with .cast(DType::F32) or .cast(DType::F64)"
    );
}

#[test]
fn panics_point_at_the_caller() {
    // #[track_caller] all the way: the location is this file, not the runtime.
    // The panic hook is process-wide and the other tests of this binary run
    // (and panic) on other threads meanwhile: the hook records this thread's
    // panic only and hands every other one to the previous hook.
    let hook = std::sync::Arc::new(std::panic::take_hook());
    let loc = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (l2, previous) = (loc.clone(), hook.clone());
    let this_thread = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() != this_thread {
            return previous(info);
        }
        *l2.lock().unwrap() = info
            .location()
            .map(|l| l.file().to_string())
            .unwrap_or_default();
    }));
    let _ = std::panic::catch_unwind(|| f32s(&[2]) + f32s(&[3]));
    drop(std::panic::take_hook());
    std::panic::set_hook(std::sync::Arc::into_inner(hook).expect("the previous hook"));
    assert!(
        loc.lock().unwrap().ends_with("errors.rs"),
        "panic located at {}",
        loc.lock().unwrap()
    );
}

#[differentiable]
fn tail_add(x: &Array, w: &Array) -> Array {
    (x + w).sum()
}

#[differentiable]
fn tail_reshape(x: &Array) -> Array {
    x.reshape(&[5]).sum()
}

#[differentiable]
fn tail_matmul(x: &Array, w: &Array) -> Array {
    x.matmul(w).sum()
}

/// `jacrev` skips the output-only tail (it computes only its shapes): bad
/// shapes there still panic with the forward's message.
#[test]
fn shape_errors_in_an_output_only_tail_read_as_in_the_forward() {
    let msg = message(|| {
        nabla::jacrev(tail_add)(&f32s(&[2, 3]), &f32s(&[4]));
    });
    assert_eq!(
        msg,
        "add: shapes [2, 3] and [4] do not broadcast; trailing dimensions must be equal or 1 \
         (reshape or expand_dims one operand)"
    );
    let msg = message(|| {
        nabla::jacrev(tail_reshape)(&f32s(&[2, 3]));
    });
    assert_eq!(
        msg,
        "reshape: cannot reshape [2, 3] (6 elements) into [5] (5 elements); the element counts must match"
    );
    // The same message as the forward's, with the shapes as the caller's
    // arrays have them (the 1-D operand not promoted).
    let forward = message(|| {
        tail_matmul(&f32s(&[2, 3]), &f32s(&[4]));
    });
    let tail = message(|| {
        nabla::jacrev(tail_matmul)(&f32s(&[2, 3]), &f32s(&[4]));
    });
    assert_eq!(
        tail,
        "matmul: inner dimensions differ, [2, 3] @ [4] (3 vs 4); the last axis of the left operand \
         must equal the second-to-last of the right (transpose one operand?)"
    );
    assert_eq!(tail, forward);
}

/// `cross_entropy` takes class indices as i64 or probabilities in the
/// logits' shape; float class indices (the usual first try) name the dtype
/// expected and the conversion, and so does any other mismatch.
#[test]
fn cross_entropy_names_the_dtype_of_its_targets() {
    let logits = Array::zeros(&[2, 3], DType::F64);
    let float_labels = Array::from_vec(vec![0.0f64, 2.0], &[2]);
    let msg = message(|| {
        nabla::cross_entropy(&logits, &float_labels);
    });
    assert_eq!(
        msg,
        "cross_entropy: targets of dtype f64 and shape [2] look like class indices, which must be i64: \
         convert them with `targets.cast(DType::I64)` (or build them from i64 values); float targets are \
         probabilities of the logits' shape [2, 3]"
    );
    // Square logits: float indices would broadcast silently against them.
    let square = Array::zeros(&[2, 2], DType::F64);
    let msg = message(|| {
        nabla::grad(nabla::cross_entropy)(&square, &float_labels);
    });
    assert!(
        msg.starts_with(
            "cross_entropy: targets of dtype f64 and shape [2] look like class indices"
        ),
        "{msg}"
    );
    let bools = Array::from_vec(vec![1.0f64, 0.0, 0.0, 0.0, 1.0, 0.0], &[2, 3]).cast(DType::Bool);
    let msg = message(|| {
        nabla::cross_entropy(&logits, &bools);
    });
    assert_eq!(
        msg,
        "cross_entropy: targets of dtype bool and shape [2, 3] match neither form: give class indices as an \
         i64 array of shape [2] (`.cast(DType::I64)`), or probabilities in the logits' dtype and shape [2, 3]"
    );
    // Both correct forms still work.
    let idx = float_labels.cast(DType::I64);
    let onehot = Array::from_vec(vec![1.0f64, 0.0, 0.0, 0.0, 0.0, 1.0], &[2, 3]);
    assert_eq!(
        nabla::cross_entropy(&logits, &idx).item(),
        nabla::cross_entropy(&logits, &onehot).item()
    );
}
