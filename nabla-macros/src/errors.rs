//! The error context of `#[differentiable]`: option parsing and lowering
//! report spanned errors here instead of stopping at the first, and the
//! macro emits them all at once (one `compile_error!` each, in the order
//! reported).

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use std::fmt::Display;

/// The errors reported so far, combined into one `syn::Error`.
#[derive(Default)]
pub struct Errors {
    all: Option<syn::Error>,
}

impl Errors {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reports `msg` at `span`.
    pub fn error(&mut self, span: Span, msg: impl Display) {
        self.push(syn::Error::new(span, msg));
    }

    /// Reports `msg` covering all of `tokens` (a whole attribute, say).
    pub fn error_spanned(&mut self, tokens: impl ToTokens, msg: impl Display) {
        self.push(syn::Error::new_spanned(tokens, msg));
    }

    /// Reports `e` (with every error combined into it).
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.all {
            Some(all) => all.combine(e),
            None => self.all = Some(e),
        }
    }

    /// The value of `r`, or `None` after reporting its error.
    pub fn ok<T>(&mut self, r: syn::Result<T>) -> Option<T> {
        r.map_err(|e| self.push(e)).ok()
    }

    /// Whether nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.all.is_none()
    }

    /// The reported errors as `compile_error!` invocations.
    pub fn into_compile_error(self) -> TokenStream {
        self.all.map(|e| e.to_compile_error()).unwrap_or_default()
    }
}
