//! Compile errors are part of the product: each unsupported construct is a
//! spanned error saying what to write instead. The expected messages live in
//! `tests/ui/*.stderr`.

#[test]
fn compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
