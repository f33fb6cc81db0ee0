#[differentiable]
struct S;
