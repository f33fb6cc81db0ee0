//! A tour of `Array`: creation, broadcasting, reductions, shape ops,
//! indexing, random keys and printing.
//!
//! Run: `cargo run --release --example arrays`

use nabla::prelude::*;

fn main() {
    // Creation
    let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    println!("a = from_vec(.., [2, 3]):\n{a}\n");
    println!("zeros [2, 2] f64:\n{}\n", Array::zeros(&[2, 2], DType::F64));
    println!("full [3] 7.0:  {}", Array::full(&[3], 7.0, DType::F64));
    println!("arange 5:      {}", Array::arange(5, DType::I64));
    println!(
        "linspace 0..1: {}",
        Array::linspace(0.0, 1.0, 5, DType::F64)
    );
    println!("eye 3:\n{}\n", Array::eye(3, DType::F32));

    // Broadcasting: [2, 3] + [3] and [2, 1] * [1, 3]
    let row = Array::from_vec(vec![10.0f32, 20.0, 30.0], &[3]);
    println!("a + row:\n{}\n", &a + &row);
    let col = Array::from_vec(vec![1.0f32, -1.0], &[2, 1]);
    println!(
        "col * row (outer product by broadcasting):\n{}\n",
        &col * &row
    );
    // Scalars are weakly typed: the result stays f32.
    let scaled = 0.5 * &a + 1.0;
    println!("0.5 * a + 1 ({}):\n{scaled}\n", scaled.dtype());

    // Reductions
    println!("sum(a) = {}", a.sum());
    println!("sum over axis 1 = {}", a.sum_axes(&[1], false));
    println!("mean over axis 0, keepdim = {}", a.mean_axes(&[0], true));
    println!("max = {}, argmax along axis 1 = {}", a.max(), a.argmax(1));
    println!("softmax along the last axis:\n{}\n", a.softmax(-1));

    // Shape ops and indexing
    println!("transpose:\n{}\n", a.transpose());
    println!("reshape [3, 2]:\n{}\n", a.reshape(&[3, 2]));
    println!("a[:, 1:3]:\n{}\n", a.slice(&[0..2, 1..3]));
    println!("rows [1, 0, 1]:\n{}\n", a.index_select(0, &[1, 0, 1]));
    let mask = a.gt(&Array::scalar(3.0f32));
    println!(
        "where(a > 3, a, 0):\n{}\n",
        nabla::where_(&mask, &a, &a.zeros_like())
    );
    println!("matmul [2, 3] @ [3, 2]:\n{}\n", a.matmul(&a.transpose()));

    // Random numbers: a global seed, or explicit keys like JAX.
    nabla::manual_seed(0);
    println!("randn [2, 3]:\n{}\n", nabla::randn(&[2, 3], DType::F32));
    let key = nabla::random::Key::new(42);
    let [k1, k2] = key.split2();
    println!("uniform with key k1: {}", k1.uniform(&[4], DType::F64));
    println!("normal with key k2:  {}", k2.normal(&[4], DType::F64));

    // Large arrays print summarised, like NumPy.
    println!(
        "arange 2000:\n{}",
        Array::arange(2000, DType::F32).reshape(&[40, 50])
    );

    // Interop with ndarray.
    let nd = a.to_ndarray::<f32>();
    println!("\nas ndarray, element [1, 2] = {}", nd[[1, 2]]);
    let back = Array::from(nd);
    println!("and back: shape {:?}, dtype {}", back.shape(), back.dtype());
}
