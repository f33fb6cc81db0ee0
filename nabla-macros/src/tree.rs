//! `#[derive(Tree)]`: lets a struct of arrays be a differentiable argument
//! (its gradient is a value of the same struct).

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields};

/// Expands `#[derive(Tree)]`.
pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            name,
            "#[derive(Tree)] supports structs only; use Vec, arrays or tuples for collections",
        ));
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "#[derive(Tree)] does not support generic structs yet; use concrete field types",
        ));
    }
    let tree = quote!(::nabla::tree::Tree);
    let (access, keys, build, names): (
        Vec<TokenStream>,
        Vec<TokenStream>,
        TokenStream,
        Vec<String>,
    ) = match &data.fields {
        Fields::Named(named) => {
            let ids: Vec<_> = named
                .named
                .iter()
                .map(|f| f.ident.clone().expect("named"))
                .collect();
            let access = ids.iter().map(|i| quote!(self.#i)).collect();
            let keys = ids
                .iter()
                .map(|i| {
                    let s = i.to_string();
                    quote!(::nabla::tree::Seg::Field(#s))
                })
                .collect();
            let build = quote!(#name { #(#ids: #tree::rebuild(&self.#ids, leaves)),* });
            let names = ids.iter().map(|i| i.unraw().to_string()).collect();
            (access, keys, build, names)
        }
        Fields::Unnamed(un) => {
            let idx: Vec<syn::Index> = (0..un.unnamed.len()).map(syn::Index::from).collect();
            let access = idx.iter().map(|i| quote!(self.#i)).collect();
            let keys = (0..un.unnamed.len())
                .map(|i| quote!(::nabla::tree::Seg::Index(#i)))
                .collect();
            let build = quote!(#name(#(#tree::rebuild(&self.#idx, leaves)),*));
            let names = (0..un.unnamed.len()).map(|i| i.to_string()).collect();
            (access, keys, build, names)
        }
        Fields::Unit => (Vec::new(), Vec::new(), quote!(#name), Vec::new()),
    };
    let msg = format!(
        "tree access {{path:?}}: `{name}` has no such field; differentiable code can only read single arrays"
    );
    Ok(quote! {
        impl #tree for #name {
            type Grad = #name;
            fn flatten_into(&self, out: &mut ::std::vec::Vec<::nabla::Array>) {
                #(#tree::flatten_into(&#access, out);)*
            }
            fn num_leaves(&self) -> usize {
                0 #(+ #tree::num_leaves(&#access))*
            }
            fn for_each_leaf_mut(&mut self, f: &mut dyn ::core::ops::FnMut(&mut ::nabla::Array)) {
                #(#tree::for_each_leaf_mut(&mut #access, f);)*
                let _ = f;
            }
            fn rebuild(&self, leaves: &mut dyn ::core::iter::Iterator<Item = ::nabla::Array>) -> #name {
                #build
            }
            #[track_caller]
            fn leaf_index(&self, path: &[::nabla::tree::Seg]) -> usize {
                let mut offset = 0usize;
                #(
                    if path.first() == ::core::option::Option::Some(&#keys) {
                        return offset + #tree::leaf_index(&#access, &path[1..]);
                    }
                    offset += #tree::num_leaves(&#access);
                )*
                let _ = offset;
                panic!(#msg)
            }
            #[track_caller]
            fn leaf_offset(&self, path: &[::nabla::tree::Seg]) -> usize {
                let mut offset = 0usize;
                if path.is_empty() {
                    return 0;
                }
                #(
                    if path.first() == ::core::option::Option::Some(&#keys) {
                        return offset + #tree::leaf_offset(&#access, &path[1..]);
                    }
                    offset += #tree::num_leaves(&#access);
                )*
                let _ = offset;
                panic!(#msg)
            }
            fn names_into(&self, prefix: &str, out: &mut ::std::vec::Vec<::std::string::String>) {
                #(#tree::names_into(&#access, &::nabla::tree::join_name(prefix, #names), out);)*
                let _ = (prefix, out);
            }
        }
        #[diagnostic::do_not_recommend]
        impl ::nabla::transforms::Cotangent for #name {}
    })
}
